"""``normalize`` on a stored history with hidden messages (contract §3, "judged on what is sent").

The rules apply to the visible messages, adjacency taken between visible messages; hidden messages
come back unchanged and still hidden; a visible summary or marker that decides what is hidden is
never removed, and a marker or summary never receives results (``normalize --raw`` once wrote
a synthetic result into the summary of ``examples/orphan-after-condense.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ctxmodel.cli import main
from ctxmodel.codec import dump, load, read
from ctxmodel.model import Message, ToolResult
from ctxmodel.normalize import normalize, normalize_report
from ctxmodel.strategies import histories
from ctxmodel.visibility import effective, visible_mask

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


def _hidden(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    return [m for m, shown in zip(dump(history), visible_mask(history), strict=True) if not shown]


@SETTINGS
@given(histories())
def test_hidden_messages_pass_through_and_the_request_is_the_same(value: list[dict[str, Any]]) -> None:
    history = load(value)
    out, report = normalize_report(history)
    assert _hidden(out) == _hidden(history)
    assert len(effective(out)) == sum(visible_mask(out))
    emptied_decider = any(not m.content for m in effective(out)) and not any(not m.content for m in effective(history))
    if not emptied_decider:
        assert dump(effective(out)) == dump(normalize(effective(history)))
    for i in report.messages_inserted:
        assert visible_mask(out)[i]


@SETTINGS
@given(histories())
def test_a_marker_or_summary_never_receives_results(value: list[dict[str, Any]]) -> None:
    history = load(value)
    out = normalize(history)
    before = {id(m): m for m in history}
    for message in out:
        if not (message.is_truncation_marker or message.is_summary) or id(message) in before:
            continue
        had = {b.tool_use_id for m in history if m.meta == message.meta for b in m.tool_results}
        assert {b.tool_use_id for b in message.blocks if isinstance(b, ToolResult)} <= had


def test_a_deciding_marker_emptied_is_kept() -> None:
    value = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "a", "truncationParent": "t1"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}],
         "isTruncationMarker": True, "truncationId": "t1"},
        {"role": "assistant", "content": "b"},
    ]
    out = normalize(load(value))
    assert len(out) == 4 and out[2].is_truncation_marker and out[2].content == ()
    assert visible_mask(out) == [True, False, True, True]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_normalize_raw_leaves_the_summary_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = EXAMPLES / "orphan-after-condense.json"
    out_file = tmp_path / "raw.json"
    code, _, err = run(["normalize", "--raw", str(source), "-o", str(out_file)], capsys)
    assert code == 0
    stored, result = read(source), read(out_file)
    assert len(result) == 10 and result[6] == stored[6]  # the summary: no synthetic result in it
    assert _hidden(result) == _hidden(stored)
    assert "dropped 1 orphan result: toolu_01VMVtWgTWr43ur178AJQKgg (messages.7)" in err
    assert run(["validate", str(out_file)], capsys)[0] == 0
