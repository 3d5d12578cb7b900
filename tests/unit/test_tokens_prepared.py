"""The tokenizer's prepared ranks and lazy imports (contract §5: offline, hash-checked).

Verified ranks are kept as ``marshal`` bytes in the user cache directory so that a process does not
parse 200,000 base64 lines before its first count. What must hold: the prepared ranks equal the
parsed ones; a prepared file stands only for the bundled file it was made from (a changed bundle is
verified again and refused when tampered); a damaged or foreign file is ignored and rewritten; the
prepared form can be turned off; and importing ``ctxmodel.tokens`` (the codec does, for
``js_stringify``) loads neither tiktoken nor the ``regex`` module.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodel.tokens import encodings

NAME = "cl100k_base"  # the smaller of the two: about 1.6 MB of prepared ranks


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CTXMODEL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _published() -> str:
    return encodings.PUBLISHED_SHA256[NAME]


def test_prepared_ranks_are_written_once_and_equal_the_parsed_ones(cache: Path) -> None:
    parsed = encodings.parse_ranks(encodings.bundled_rank_bytes(NAME), NAME)
    path = encodings.prepared_path(NAME)
    assert path is not None and path.parent == cache and not path.exists()
    assert encodings._verified_ranks(NAME, _published()) == parsed  # parsed, then written
    assert path.exists() and _published()[:16] in path.name
    written = path.stat().st_mtime_ns
    assert encodings._verified_ranks(NAME, _published()) == parsed  # read back, not rewritten
    assert path.stat().st_mtime_ns == written
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary file left behind


def test_prepared_ranks_are_not_used_to_parse_when_present(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    encodings._verified_ranks(NAME, _published())

    def no_parse(raw: bytes, name: str) -> dict[bytes, int]:
        raise AssertionError("parsed although prepared ranks were there")

    monkeypatch.setattr(encodings, "parse_ranks", no_parse)
    assert len(encodings._verified_ranks(NAME, _published())) == 100256


def test_a_changed_bundle_is_verified_again_and_a_tampered_one_refused(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encodings._verified_ranks(NAME, _published())  # prepared from the real bundle
    tampered = encodings.bundled_rank_bytes(NAME).replace(b" 0\n", b" 1\n", 1)
    monkeypatch.setattr(encodings, "_bundled_gz", lambda name: gzip.compress(tampered))
    with pytest.raises(encodings.EncodingError, match="sha256"):
        encodings._verified_ranks(NAME, _published())
    with pytest.raises(encodings.EncodingError, match="refusing"):
        encodings._verified_ranks(NAME, "0" * 64)  # tiktoken's hash is checked before any cache


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "empty"])
def test_a_damaged_prepared_file_is_ignored_and_rewritten(cache: Path, damage: str) -> None:
    parsed = encodings._verified_ranks(NAME, _published())
    path = encodings.prepared_path(NAME)
    assert path is not None
    data = path.read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped":
        data = data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]
    elif damage == "foreign":
        data = b"something else entirely\n" + data
    else:
        data = b""
    path.write_bytes(data)
    assert encodings._verified_ranks(NAME, _published()) == parsed
    assert encodings._load_prepared(NAME, hashlib.sha256(encodings._bundled_gz(NAME)).hexdigest().encode())


def test_an_empty_cache_dir_setting_turns_the_prepared_form_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXMODEL_CACHE_DIR", "")
    assert encodings.cache_dir() is None and encodings.prepared_path(NAME) is None
    assert len(encodings._verified_ranks(NAME, _published())) == 100256


def test_an_unwritable_cache_is_only_a_slower_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory would go")
    monkeypatch.setenv("CTXMODEL_CACHE_DIR", str(blocker / "ctxmodel"))
    assert len(encodings._verified_ranks(NAME, _published())) == 100256


def test_the_default_cache_dir_is_the_users(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CTXMODEL_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert encodings.cache_dir() == tmp_path / "ctxmodel"
    else:
        assert encodings.cache_dir() is not None


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_importing_tokens_or_the_codec_loads_no_tokenizer() -> None:
    loaded = _modules_after("import ctxmodel.tokens, ctxmodel.tokens.jsjson, ctxmodel.codec, ctxmodel.document")
    assert not {"tiktoken", "regex", "ctxmodel.tokens.counter", "ctxmodel.tokens.encodings"} & loaded


def test_the_lazy_names_resolve_to_the_modules_objects() -> None:
    from ctxmodel import tokens
    from ctxmodel.tokens import counter, jsjson

    for name in tokens.__all__:
        assert getattr(tokens, name) is not None
    assert tokens.Counter is counter.Counter and tokens.js_stringify is jsjson.js_stringify
    assert tokens.get_encoding is encodings.get_encoding
    assert set(tokens.__all__) <= set(dir(tokens))
    with pytest.raises(AttributeError):
        tokens.not_a_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from ctxmodel.tokens import not_a_name")
