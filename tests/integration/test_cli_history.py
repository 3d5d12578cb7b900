"""``ctxmodel validate | normalize | show`` on the example files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodel.cli import main
from ctxmodel.codec import loads, read
from ctxmodel.normalize import normalize
from ctxmodel.oracle import validate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BROKEN = {
    # file: (the API's text, as it must be printed, with the right path)
    "images-between-parallel-results.json": (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_0182gJFXCNjJn85jDyBPWfi6. Each `tool_use` block must have a corresponding `tool_result` block in "
        "the next message."
    ),
    "missing-parallel-result.json": (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_01yz1prvny83ygeYv501MMir. Each `tool_use` block must have a corresponding `tool_result` block in "
        "the next message."
    ),
    "orphan-after-condense.json": (
        "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01VMVtWgTWr43ur178AJQKgg. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ),
    "dangling-truncation-parent-after-rewind.json": (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_016k5KbITyIe0DARhoZLr37P. Each `tool_use` block must have a corresponding `tool_result` block in "
        "the next message."
    ),
    "duplicate-results.json": "messages.5.content.1: `tool_use` ids must be unique",
}
ALL = [*BROKEN, "clean-session.json"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The console script's entry point, in process: exit code, stdout, stderr."""
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def console(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real console script, installed next to this interpreter."""
    script = Path(sys.executable).parent / "ctxmodel"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "ctxmodel"]
    return subprocess.run([*command, *args], input=stdin, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_validate_prints_the_api_text_and_exits_1(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(EXAMPLES / name)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert any(line.startswith(BROKEN[name] + "  [") for line in lines), out
    assert err.count("\n") == 1 and "violation" in err


def test_validate_clean_session_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(EXAMPLES / "clean-session.json")], capsys)
    assert (code, out) == (0, "")
    assert "would accept" in err


def test_validate_maps_request_paths_to_the_stored_file(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["validate", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert out.rstrip().endswith("[unexpected-tool-use-id; stored messages.7.content.0]")


def test_validate_raw_judges_the_file_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    # Raw, the condensed messages are sent too, yet the summary still sits between the tool_use and
    # its result: the result is unexpected (at its stored position) and the tool_use lacks a result.
    code, out, _ = run(["validate", "--raw", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert code == 1
    assert "messages.7.content.0: unexpected `tool_use_id`" in out
    assert "messages.5: `tool_use` ids were found without `tool_result` blocks" in out


def test_validate_thinking_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "h.json"
    shutil.copy(EXAMPLES / "clean-session.json", target)
    code, out, _ = run(["validate", "--thinking", str(target)], capsys)
    assert (code, out) == (0, "")  # the final assistant message has no tool_use: nothing required
    history = json.loads(target.read_text())
    target.write_text(json.dumps(history[:-2]))  # end on the attempt_completion tool turn
    code, out, _ = run(["validate", "--thinking", str(target)], capsys)
    assert code == 1 and "[thinking-required]" in out
    assert run(["validate", "--no-thinking", str(target)], capsys)[0] == 0


def test_validate_show_marks_the_violations(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["validate", "--show", str(EXAMPLES / "images-between-parallel-results.json")], capsys)
    assert ">> #1 assistant" in out
    assert ">>[result" in out


@pytest.mark.parametrize("name", ALL)
def test_normalize_output_is_clean_idempotent_and_leaves_the_input_alone(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = EXAMPLES / name
    before = source.read_bytes()
    out_file = tmp_path / "out.json"
    code, out, err = run(["normalize", str(source), "-o", str(out_file)], capsys)
    assert code == 0 and out == ""
    assert err.strip()  # the report (or "no pairing changes")
    assert source.read_bytes() == before
    result = read(out_file)
    assert validate(result) == []
    assert normalize(result) == result
    again = tmp_path / "again.json"
    assert run(["normalize", "--raw", str(out_file), "-o", str(again)], capsys)[0] == 0
    assert again.read_bytes() == out_file.read_bytes()
    assert run(["validate", str(out_file)], capsys)[0] == 0


def test_normalize_report_names_the_changes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["normalize", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert code == 0
    assert len(loads(out)) == 4  # the effective history: the summary and what follows
    assert "dropped 1 orphan result: toolu_01VMVtWgTWr43ur178AJQKgg (messages.1)" in err
    assert "positions in the request" in err
    code, out, err = run(["normalize", "--orphans", "to_text", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert "Tool result:\\nCommand executed" in out
    code, out, err = run(["normalize", "--raw", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert len(json.loads(out)) == 10


def test_normalize_trailing_close(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "h.json"
    target.write_text(json.dumps(json.loads((EXAMPLES / "clean-session.json").read_text())[:-2]))
    _, out, _ = run(["normalize", str(target)], capsys)
    assert json.loads(out)[-1]["role"] == "assistant"
    _, out, err = run(["normalize", "--trailing", "close", str(target)], capsys)
    assert json.loads(out)[-1]["content"][0]["is_error"] is True
    assert "synthesized 1 result" in err


def test_normalize_refuses_to_overwrite_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "h.json"
    shutil.copy(EXAMPLES / "duplicate-results.json", target)
    before = target.read_bytes()
    code, _, err = run(["normalize", str(target), "-o", str(target)], capsys)
    assert code == 2 and err.startswith("ctxmodel: ") and "refusing to overwrite" in err
    assert target.read_bytes() == before


def test_show_marks_hidden_messages(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["show", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 10
    assert all(line.startswith("· #") for line in lines[:6])
    assert lines[6].startswith("• #6 user") and "summary" in lines[6]
    assert "4 visible (•), 6 hidden (·)" in err
    _, out, _ = run(["show", "--check", str(EXAMPLES / "orphan-after-condense.json")], capsys)
    assert out.splitlines()[7].startswith(">> • #7 user       >>[result")


def test_console_script_reads_stdin_and_writes_stdout() -> None:
    data = (EXAMPLES / "missing-parallel-result.json").read_bytes()
    done = console("validate", "-", stdin=data)
    assert done.returncode == 1
    assert b"toolu_01yz1prvny83ygeYv501MMir" in done.stdout
    assert done.stderr.decode().startswith("<stdin>: request of 6 messages")
    done = console("normalize", "-", stdin=data)
    assert done.returncode == 0
    assert validate(loads(done.stdout)) == []
    done = console("show", "-", stdin=data)
    assert done.returncode == 0 and done.stdout.decode().count("\n") == 6


def test_lone_surrogates_survive_normalize(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "h.json"
    target.write_text('[{"role": "user", "content": "half a pair: \\ud83d"}]', encoding="ascii")
    code, out, _ = run(["normalize", str(target)], capsys)
    assert code == 0
    assert json.loads(out) == [{"role": "user", "content": "half a pair: \ud83d"}]
    assert run(["show", str(target)], capsys)[0] == 0
