"""Bad input: one line on stderr naming the file and the place, exit 2, never a traceback (contract §1, §9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodel.cli import main

GOOD = b'{"role": "user", "content": "Fix the build"}'
RESULT_WITHOUT_ID = b'{"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}'
USE = b'{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {}}]}'

# name: (file bytes, the text the one line must contain after "ctxmodel: FILE: ")
CASES: dict[str, tuple[bytes, str]] = {
    "not-json": (b"this is not json", "not JSON: Expecting value at line 1 column 1"),
    "truncated": (b"[" + GOOD + b', {"role": "assistant", "cont', "not JSON: Unterminated string starting at"),
    "not-a-list": (GOOD, "messages: expected an array of messages, got an object"),
    "message-not-an-object": (
        b"[" + GOOD + b', "assistant: hi"]',
        "messages.1: expected a message object, got a string",
    ),
    # (a "system" message is OpenAI Chat's, read in that dialect: a role neither dialect has)
    "unknown-role": (b'[{"role": "robot", "content": "be brief"}]', 'messages.0.role: expected "user" or "assistant"'),
    "missing-role": (b'[{"content": "hi"}]', "messages.0.role: expected"),
    "block-without-type": (
        b'[{"role": "user", "content": [{"text": "hi"}]}]',
        "messages.0.content.0.type: expected a block type string, got nothing (key missing)",
    ),
    "tool-result-without-id": (
        b"[" + GOOD + b", " + USE + b", " + RESULT_WITHOUT_ID + b"]",
        "messages.2.content.0.tool_use_id: expected a string, got nothing (key missing)",
    ),
    "tool-use-id-null": (
        b"["
        + GOOD
        + b", "
        + USE
        + b', {"role": "user", "content": "x"}, {"role": "user", "content": [{"type": "text", "text": "a"}, '
        b'{"type": "tool_result", "tool_use_id": null}]}]',
        "messages.3.content.1.tool_use_id: expected a string, got null",
    ),
    "content-wrong-type": (
        b'[{"role": "user", "content": {"text": "hi"}}]',
        "messages.0.content: expected a string or an array of blocks, got an object",
    ),
    "result-content-wrong-type": (
        b'[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": 7}]}]',
        "messages.0.content.0.content: expected a string or an array of blocks, got a number",
    ),
    "is-error-wrong-type": (
        b'[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": "yes"}]}]',
        "messages.0.content.0.is_error: expected a boolean, got a string",
    ),
    "three-mb-single-line": (
        b'[{"role": "user", "content": "' + b"x" * 3_000_000 + b'"} {"role": "user"}]',
        "not JSON: Expecting ',' delimiter at line 1 column 3000034",
    ),
    "three-mb-line-bad-deep-inside": (
        b'[{"role": "user", "content": "' + b"y" * 3_000_000 + b'"}, {"role": "user", "content": [{"type": 3}]}]',
        "messages.1.content.0.type: expected a block type string, got a number",
    ),
    "invalid-utf8": (b'[{"role": "user", "content": "caf\xe9"}]', "invalid UTF-8 at byte 33"),
    "nan": (b'[{"role": "user", "content": "x", "ts": NaN}]', "not JSON: NaN is not valid JSON"),
    "infinity-by-exponent": (
        b'[{"role": "user", "content": "x", "ts": 1e999}]',
        "not JSON: number 1e999 is out of range",
    ),
    "empty-file": (b"", "not JSON: Expecting value at line 1 column 1"),
    "deeply-nested": (b"[" * 200_000 + b"]" * 200_000, "not JSON: nested too deeply"),
    "metadata-wrong-type": (
        b'[{"role": "user", "content": "x", "isSummary": "yes"}]',
        "messages.0.isSummary: expected a boolean",
    ),
    "ts-wrong-type": (
        b'[{"role": "user", "content": "x", "ts": "2026-03-02"}]',
        "messages.0.ts: expected a number, got a string",
    ),
    "image-without-source": (
        b'[{"role": "user", "content": [{"type": "image"}]}]',
        "messages.0.content.0.source: expected an object, got nothing (key missing)",
    ),
    "role-with-newline": (b'[{"role": "user\\nassistant", "content": "x"}]', 'got "user\\nassistant"'),
    # A byte-order mark is read past; what follows it must still be JSON.
    "byte-order-mark": (b"\xef\xbb\xbfnot json", "not JSON: Expecting value at line 1 column 1"),
    "control-character": (b'[{"role": "user", "content": "a\tb"}]', "not JSON: Invalid control character at line 1"),
}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_there_are_at_least_twelve_kinds() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("command", ["validate", "normalize", "show"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_bad_input_is_one_line_exit_2(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, expected = CASES[name]
    target = tmp_path / f"{name}.json"
    target.write_bytes(data)
    code, out, err = run([command, str(target)], capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"ctxmodel: {target}: ")
    assert expected in err
    assert "Traceback" not in err
    assert target.read_bytes() == data


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert (
        run(["validate", str(missing)], capsys)[2] == f"ctxmodel: {missing}: cannot read: No such file or directory\n"
    )
    code, _, err = run(["normalize", str(tmp_path)], capsys)
    assert code == 2 and err == f"ctxmodel: {tmp_path}: cannot read: Is a directory\n"


def test_normalize_writes_nothing_on_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "bad.json"
    target.write_bytes(CASES["tool-use-id-null"][0])
    out_file = tmp_path / "out.json"
    assert run(["normalize", str(target), "-o", str(out_file)], capsys)[0] == 2
    assert not out_file.exists()
    assert list(tmp_path.iterdir()) == [target]


def _console(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    script = Path(sys.executable).parent / "ctxmodel"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "ctxmodel"]
    return subprocess.run([*command, *args], input=stdin, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("name", ["three-mb-single-line", "invalid-utf8", "deeply-nested", "tool-use-id-null"])
def test_through_the_real_console_script(name: str, tmp_path: Path) -> None:
    data, expected = CASES[name]
    target = tmp_path / "h.json"
    target.write_bytes(data)
    done = _console("validate", str(target))
    assert done.returncode == 2
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(f"ctxmodel: {target}: ") and expected in err


def test_console_script_bad_stdin_and_missing_file(tmp_path: Path) -> None:
    done = _console("normalize", "-", stdin=b'[{"role": "user", "content": 5}]')
    assert done.returncode == 2 and done.stdout == b""
    assert (
        done.stderr == b"ctxmodel: <stdin>: messages.0.content: expected a string or an array of blocks, got a number\n"
    )
    done = _console("show", str(tmp_path / "missing.json"))
    assert done.returncode == 2
    assert done.stderr.decode() == f"ctxmodel: {tmp_path / 'missing.json'}: cannot read: No such file or directory\n"
