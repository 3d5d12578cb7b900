"""Recognise what was opened, and say so in one line.

Each kind of file a user may bring after a 400 gets its own line on stderr: what it is, and what
ctxmodel does with it (reads it, or names the file to open instead). Every command that opens a
history file says the same.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.cli import main

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "<task>fix it</task>"}], "ts": 1},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "read_file",
                                       "input": {"path": "a.ts"}}], "ts": 2},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "x = 1"}], "ts": 3},
    {"role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": 4},
]
COMPACT = json.dumps(HISTORY, separators=(",", ":"))


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def first_line(err: str) -> str:
    return err.splitlines()[0]


def test_a_plain_history_says_nothing_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "h.json", COMPACT.encode())
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 0 and err.count("\n") == 1


def test_a_utf8_byte_order_mark_is_read_past(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + COMPACT.encode())
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 0
    assert first_line(err) == f"{path}: starts with a UTF-8 byte-order mark: read past it (agents write none)"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_is_decoded(encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "u16.json", COMPACT.encode(encoding))
    code, out, err = run(["show", str(path)], capsys)
    label = "BE" if encoding == "utf-16-be" else "LE"
    assert code == 0 and out.count("\n") == 4
    assert first_line(err) == f"{path}: UTF-16 ({label}) text: decoded (agents write UTF-8)"


def test_a_request_body_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8192, "system": "be brief", "messages": HISTORY[:2]}
    path = write(tmp_path, "request.json", json.dumps(body).encode())
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 0
    assert first_line(err) == (
        f'{path}: an API request body: reading its "messages" (2 messages; also model, max_tokens, system)'
    )
    body["messages"] = [HISTORY[1]]
    path.write_text(json.dumps(body))
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 1 and "messages.0: first message must use" in out.replace('messages: first', "messages.0: first")


def test_a_fixture_opens_its_params_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = {"schema": "ctxmodel-fixture/1", "property": "normalize.results-lead", "op": "normalize",
               "params": {"messages": copy.deepcopy(HISTORY)}, "observed": {}}
    path = write(tmp_path, "fixture.json", json.dumps(fixture).encode())
    for command in ("show", "validate"):
        code, _, err = run([command, str(path)], capsys)
        assert code == 0
        assert first_line(err) == (
            f"{path}: a ctxmodel fixture (property normalize.results-lead, op normalize): reading its "
            "params.messages (4 messages)"
        )
    fixture["params"]["messages"][2]["content"][0]["tool_use_id"] = None  # type: ignore[index]
    path.write_text(json.dumps(fixture))
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 2 and "params.messages.2.content.0.tool_use_id: expected a string, got null" in err


def test_json_lines_of_messages_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "h.jsonl", "\n".join(json.dumps(m) for m in HISTORY).encode() + b"\n")
    code, out, err = run(["show", str(path)], capsys)
    assert code == 0 and out.count("\n") == 4, err
    assert first_line(err) == f"{path}: JSON Lines, one message per line: read as a history of 4 messages"


def test_a_json_lines_session_log_is_named_and_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = [
        {"type": "summary", "summary": "Fix", "leafUuid": "u2"},
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "fix it"}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "message": {"role": "assistant", "content": []}},
    ]
    path = write(tmp_path, "session.jsonl", "\n".join(json.dumps(e) for e in events).encode())
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"ctxmodel: {path}: a JSON Lines session log (3 events (assistant, summary, user), like Claude Code's "
        "~/.claude/projects logs), not a stored history: ctxmodel reads an agent's api_conversation_history.json "
        "(a JSON array of messages)\n"
    )


def test_roo_ui_messages_point_to_the_api_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ui = [{"ts": 1, "type": "say", "say": "text", "text": "fix it"},
          {"ts": 2, "type": "ask", "ask": "tool", "text": "{\"tool\":\"readFile\"}"}]
    path = write(tmp_path, "ui_messages.json", json.dumps(ui).encode())
    code, _, err = run(["count", str(path)], capsys)
    assert code == 2
    assert err == (
        f"ctxmodel: {path}: this is a ui_messages.json (2 say/ask entries: the chat as the extension shows it), "
        "not what the API is sent: open api_conversation_history.json in the same task folder\n"
    )


def test_a_cline_history_is_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cline = [
        {"role": "user", "content": [{"type": "text", "text": "<task>analyse</task>"}], "ts": 1},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tooluse_a", "name": "use_subagents",
                                           "input": {"prompt_1": "x"}, "call_id": "tooluse_a"}],
         "modelInfo": {"modelId": "claude_4_5_opus", "providerId": "openai", "mode": "plan"},
         "metrics": {"tokens": {"prompt": 1, "completion": 2, "cached": 0}}, "ts": 2},
        {"role": "user", "content": [{"type": "text", "text": "[subagents] Result:\nSubagent results: ..."}], "ts": 3},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tooluse_b", "name": "read_file",
                                           "input": {"path": "a"}, "call_id": "tooluse_b"}], "ts": 4},
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a'] Result:\nx"}], "ts": 5},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 6},
    ]
    path = write(tmp_path, "api_conversation_history.json", json.dumps(cline, separators=(",", ":")).encode())
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 1 and "2  missing-tool-result" in out
    assert first_line(err) == (
        f'{path}: a Cline history: Cline keeps each tool\'s output as a text block "[tool] Result: …" (2 here), '
        "not as a tool_result block, so by the Anthropic rules every tool_use below reads as missing its result: "
        "that is Cline's format, not damage to the file"
    )


@pytest.mark.parametrize("command", [["validate"], ["show"], ["normalize"], ["count"], ["repair"],
                                     ["recover", "--context-window", "100000"]])
def test_every_command_says_what_it_opened(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bom.json", b"\xef\xbb\xbf" + COMPACT.encode())
    code, _, err = run([command[0], str(path), *command[1:]], capsys)
    assert code == 0, err
    assert first_line(err) == f"{path}: starts with a UTF-8 byte-order mark: read past it (agents write none)"


def test_repair_writes_back_what_it_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A request body, a UTF-16 file and JSON Lines come back as what they were."""
    broken = [HISTORY[0], HISTORY[1], {"role": "user", "content": "no result"}]
    body = {"model": "m", "messages": broken, "max_tokens": 5}
    cases = {
        "request.json": json.dumps(body).encode(),
        "u16.json": b"\xff\xfe" + json.dumps(broken).encode("utf-16-le"),
        "h.jsonl": "\n".join(json.dumps(m) for m in broken).encode() + b"\n",
        "bom.json": b"\xef\xbb\xbf" + json.dumps(broken).encode(),
    }
    for name, data in cases.items():
        path = write(tmp_path, name, data)
        code, _, err = run(["repair", str(path), "--in-place"], capsys)
        assert code == 0, err
        fixed = path.read_bytes()
        assert run(["validate", str(path)], capsys)[0] == 0
        if name == "request.json":
            assert list(json.loads(fixed)) == ["model", "messages", "max_tokens"]
        elif name == "u16.json":
            assert fixed.startswith(b"\xff\xfe") and json.loads(fixed[2:].decode("utf-16-le"))[2]["content"][0][
                "is_error"] is True
        elif name == "h.jsonl":
            assert fixed.endswith(b"\n") and len(fixed.splitlines()) == 3
        else:
            assert fixed.startswith(b"\xef\xbb\xbf")
