"""The API's documented limits in ``validate`` (domain §5.2), and ``repair`` keeping within them.

Large inputs are built in memory from a few repeated strings, so the test stays fast: a 6 MB
base64 image, a request of eight 4.5 MB images (36 MB), images too wide, too many of them.
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.cli import main
from ctxmodel.codec import load
from ctxmodel.oracle import RULES, image_size, request_bytes, validate
from ctxmodel.repair import repair, request_of

MB = 1024 * 1024


def png(width: int, height: int, pad: int = 0) -> str:
    """A base64 PNG header of the given size, padded to about ``pad`` base64 characters."""
    ihdr = b"IHDR" + struct.pack(">II", width, height) + b"\x08\x06\0\0\0"
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr
    text = base64.b64encode(header + b"\0" * 3).decode()
    return text + "A" * max(pad - len(text), 0)


def image(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "look"}, *blocks]}


def rules(value: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(v.rule, v.path) for v in validate(load(value))]


def test_a_6_mb_base64_image_is_reported_with_its_path() -> None:
    value = [user(image(png(100, 100, 6 * MB)))]
    found = validate(load(value))
    assert [(v.rule, v.path) for v in found] == [("image-too-large", "messages.0.content.1.image.source.base64")]
    assert found[0].message == (
        f"messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: {6 * MB} bytes > 5242880 bytes"
    )


def test_a_nested_image_is_reported_at_the_apis_nested_path() -> None:
    value: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a",
                                      "content": [{"type": "text", "text": "x"}, image(png(9000, 10))]}]},
    ]
    assert rules(value) == [("image-too-many-pixels", "messages.2.content.0.tool_result.content.1.image.source.base64")]


def test_a_request_over_32_mb_is_reported() -> None:
    value = [user(*[image(png(100, 100, 4 * MB + MB // 2)) for _ in range(8)])]
    history = load(value)
    assert request_bytes(history) > 32 * MB
    found = validate(history)
    assert [(v.rule, v.path) for v in found] == [("request-too-large", "messages")]
    assert "exceeds 32 MB" in found[0].message and "> 33554432 bytes" in found[0].message
    result, report = repair(history)
    assert validate(request_of(result)) == [] and request_bytes(result) <= 32 * MB
    assert {c.rule for c in report.changes} == {"request-too-large"}
    assert sum(1 for b in result[0].blocks if b.type == "image") >= 6  # only as many as it takes


def test_image_count_and_many_image_dimensions() -> None:
    many = [user(*[image(png(2100, 50)) for _ in range(21)])]
    assert {r for r, _ in rules(many)} == {"many-image-dimensions"}
    assert len(rules(many)) == 21
    assert rules([user(*[image(png(2100, 50)) for _ in range(20)])]) == []
    crowd = [user(*[image(png(10, 10)) for _ in range(101)])]
    assert rules(crowd) == [("too-many-images", "messages.0.content.101.image")]
    for value in (many, crowd):
        result, _ = repair(load(value))
        assert validate(request_of(result)) == []
    result, report = repair(load(many))
    assert len(report.changes) == 1  # one image out: 20 left, and 2000 px is then allowed


def test_image_headers() -> None:
    assert image_size(png(123, 45)) == (123, 45)
    gif = base64.b64encode(b"GIF89a" + struct.pack("<HH", 640, 480) + b"\0" * 8).decode()
    assert image_size(gif) == (640, 480)
    webp = b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (799).to_bytes(3, "little") + (599).to_bytes(3, "little")
    assert image_size(base64.b64encode(webp).decode()) == (800, 600)
    exif = (b"\xff\xe1" + struct.pack(">H", 40002) + b"\0" * 40000) * 2  # big APP1 blocks before the frame header
    jpeg = b"\xff\xd8" + exif + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 3000, 9001) + b"\0" * 12
    assert image_size(base64.b64encode(jpeg).decode()) == (9001, 3000)
    assert image_size("not base64 at all!") is None
    assert image_size("iVBORw0KGgo" + "x" * 40) is None  # a PNG signature and no IHDR chunk after it
    assert image_size(base64.b64encode(b"plain text").decode()) is None


def test_reasoning_blocks_outside_thinking_mode_and_result_item_types() -> None:
    reasoning = {"type": "reasoning", "text": "hm", "summary": []}
    value: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [reasoning, {"type": "text", "text": "done"}]},
    ]
    assert rules(value) == [("reasoning-without-thinking", "messages.1.content.0")]
    assert validate(load(value), thinking=True) == []
    result, _ = repair(load(value))
    assert [b.type for b in result[1].blocks] == ["text"]
    value = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "r", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a",
                                      "content": [{"type": "tool_use", "id": "x", "name": "n", "input": {}}]}]},
    ]
    assert rules(value) == [("tool-result-content-type", "messages.2.content.0")]
    result, _ = repair(load(value))
    assert validate(request_of(result)) == []
    assert {"tool-result-content-type", "reasoning-without-thinking", "request-too-large"} <= set(RULES)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_validate_and_repair_on_a_file_with_a_6_mb_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "big.json"
    path.write_text(json.dumps([user(image(png(100, 100, 6 * MB))), {"role": "assistant", "content": "ok"}]))
    code, out, _ = run(["validate", str(path)], capsys)
    assert code == 1
    assert f"messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: {6 * MB} bytes" in out
    code, _, err = run(["repair", str(path), "--in-place"], capsys)
    assert code == 0 and "messages.0: image-too-large: image replaced by a text saying so" in err
    assert run(["validate", str(path)], capsys)[0] == 0


def test_a_request_over_32_mb_of_text_is_left_to_recover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No image removal would bring it under: repair changes nothing and says what would help."""
    import json

    value = [user(image(png(10, 10))), {"role": "assistant", "content": "ok"},
             {"role": "user", "content": "x" * (33 * MB)}]
    _, report = repair(load(value))
    assert not report.changed and [v.rule for v in report.unresolved] == ["request-too-large"]
    assert "at least" in report.unresolved[0].message
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(value))
    code, _, err = run(["repair", str(path), "--in-place"], capsys)
    assert code == 1 and "ctxmodel recover FILE --context-window N" in err
    assert not Path(f"{path}.bak").exists()
