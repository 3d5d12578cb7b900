"""``ctxmodel count FILE``: the recount of contract §4 and where the tokens go."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxmodel.cli import main
from ctxmodel.codec import read
from ctxmodel.tokens import get_counter, request_tokens

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def _total(out: str) -> int:
    match = re.search(r": (\d+) tokens \(counter", out)
    assert match is not None, out
    return int(match.group(1))


def _rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("largest blocks"))
    return [line.split() for line in lines[start + 1 :]]


@pytest.mark.parametrize("name", ["clean-session.json", "orphan-after-condense.json"])
@pytest.mark.parametrize("counter", ["zoo", "o200k", "cl100k"])
def test_total_is_the_recovery_recount(name: str, counter: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / name)
    code, out, err = run(["count", path, "--counter", counter], capsys)
    assert code == 0 and err == ""
    assert _total(out) == request_tokens(read(path), "", counter)


def test_raw_counts_the_file_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "orphan-after-condense.json")
    history = read(path)
    _, effective_out, _ = run(["count", path], capsys)
    _, raw_out, _ = run(["count", path, "--raw"], capsys)
    assert _total(raw_out) == get_counter("zoo").count_messages(history)
    assert _total(raw_out) > _total(effective_out)  # the condensed messages count only with --raw


def test_largest_blocks_with_paths_types_and_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"p": 1.0}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "word " * 400},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 10_000}},
            ],
        },
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]},
    ]
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are terse.")
    code, out, _ = run(["count", str(path), "--counter", "o200k", "--system-prompt", str(prompt)], capsys)
    assert code == 0
    rows = _rows(out)
    counter = get_counter("o200k")
    hello, sys_tokens = counter.raw_text("hello"), counter.raw_text("You are terse.")
    result_tokens = counter.raw_text("Tool Result (t1)\n" + "word " * 400)
    use_tokens = counter.raw_text('Tool: read\nArguments: {"p":1}')
    raw_total = hello + sys_tokens + result_tokens + use_tokens + 100
    assert _total(out) == raw_total  # no fudge with o200k
    assert rows[0][:3] == ["messages.2.content.0", "tool_result", str(result_tokens)]
    assert rows[1][:3] == ["messages.2.content.1", "image", "100"]
    assert ["system", "text", str(sys_tokens)] in [r[:3] for r in rows]
    assert ["messages.0.content", "text", str(hello)] in [r[:3] for r in rows]
    assert not any(r[1] == "thinking" for r in rows)  # counts 0 (domain §4.6): not among the largest
    assert rows[0][3] == f"{100 * result_tokens / raw_total:.1f}%"
    assert len(rows) == 5


def test_at_most_ten_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = [{"role": "user", "content": f"message number {i} " * (i + 1)} for i in range(25)]
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    _, out, _ = run(["count", str(path)], capsys)
    rows = _rows(out)
    assert len(rows) == 10 and rows[0][0] == "messages.24.content"
    assert [int(r[2]) for r in rows] == sorted((int(r[2]) for r in rows), reverse=True)


def test_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "clean-session.json")
    code, out, err = run(["count", path, "--counter", "gpt2"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("ctxmodel: counter 'gpt2': unknown tokenizer; expected o200k_base or cl100k_base")
    assert err.endswith("or an alias: zoo, o200k, cl100k\n") and err.count("\n") == 1
    code, _, err = run(["count", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and err.count("\n") == 1 and "missing.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": null}]}]')
    code, _, err = run(["count", str(bad)], capsys)
    assert code == 2 and err == f"ctxmodel: {bad}: messages.0.content.0.tool_use_id: expected a string, got null\n"
    code, _, err = run(["count", path, "--system-prompt", str(tmp_path / "nope.txt")], capsys)
    assert code == 2 and "cannot read the system prompt" in err and err.count("\n") == 1
