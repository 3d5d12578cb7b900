"""``repair``: a stored history whose request passes the oracle, changing as little as it can.

Plain Hypothesis tests on ``histories()`` (every broken shape of the field) for what the catalogue's
repair properties will ask: the request of the repair passes the oracle, hidden messages and their
tags survive, valid results are never moved, the repair is idempotent, and a history that needs
nothing comes back as it was. Then the command: every example, a file with condensed and truncated
messages, byte-identical output on a clean file, the file's own formatting on a changed one.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ctxmodel.cli import main
from ctxmodel.codec import dump, load, read
from ctxmodel.document import parse_document
from ctxmodel.model import Message, ToolUse
from ctxmodel.normalize import normalize
from ctxmodel.oracle import validate
from ctxmodel.repair import repair, request_of
from ctxmodel.strategies import histories, well_formed_histories
from ctxmodel.tokens.jsjson import js_stringify
from ctxmodel.visibility import visible_mask

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# No target phase: histories() steers toward pairing defects, and hill-climbing on one history took
# most of the run without drawing new shapes.
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
)
_GOOD_ID = re.compile(r"[a-zA-Z0-9_-]+")
Msg = dict[str, Any]


def _hidden(history: Sequence[Message]) -> list[Msg]:
    return [m for m, shown in zip(dump(tuple(history)), visible_mask(history), strict=True) if not shown]


def _valid_results(history: Sequence[Message]) -> list[tuple[str, Msg]]:
    """``(id, result)`` for each result the request holds validly: in a user message right after
    the assistant message with its ``tool_use`` (the first for its id there), the id used once in the
    request and of the API's charset, and nowhere a defect makes ambiguous."""
    request = dump(request_of(history))
    uses: dict[str, int] = {}
    odd: set[str] = set()
    for m in request:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_use":
                uses[b["id"]] = uses.get(b["id"], 0) + 1
                if m["role"] != "assistant":
                    odd.add(b["id"])
            elif b.get("type") == "tool_result" and m["role"] != "user":
                odd.add(b["tool_use_id"])
    out: list[tuple[str, Msg]] = []
    for before, m in itertools.pairwise(request):
        if before["role"] != "assistant" or m["role"] != "user" or not isinstance(m["content"], list):
            continue
        ids = {b["id"] for b in before["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        seen: set[str] = set()
        for b in m["content"]:
            if b.get("type") != "tool_result" or b["tool_use_id"] not in ids or b["tool_use_id"] in seen:
                continue
            tid = b["tool_use_id"]
            seen.add(tid)
            if uses.get(tid) == 1 and tid not in odd and _GOOD_ID.fullmatch(tid):
                out.append((tid, b))
    return out


def _answered(request: Sequence[Mapping[str, Any]], tool_id: str) -> list[Msg]:
    """The results for ``tool_id`` leading the message right after the one with its ``tool_use``."""
    for before, m in itertools.pairwise(request):
        content = before["content"] if isinstance(before["content"], list) else []
        if any(b.get("type") == "tool_use" and b.get("id") == tool_id for b in content):
            lead: list[Msg] = []
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") != "tool_result":
                    break
                lead.append(b)
            return [b for b in lead if b.get("tool_use_id") == tool_id]
    return []


@SETTINGS
@given(histories())
def test_the_request_of_the_repair_passes_the_oracle(value: list[Msg]) -> None:
    history = load(value)
    result, report = repair(history)
    if not request_of(result):
        # Repair cannot invent a message: a request left with none (nothing to send, or only what the
        # API rejects) says so rather than passing.
        assert [v.rule for v in report.unresolved] == ["empty-messages"], report.lines()
        return
    assert validate(request_of(result)) == [], report.lines()
    assert validate(normalize(request_of(result))) == []  # the reference pipeline agrees
    assert report.unresolved == ()


@SETTINGS
@given(histories())
def test_hidden_messages_and_their_tags_survive(value: list[Msg]) -> None:
    history = load(value)
    result, _ = repair(history)
    assert _hidden(result) == _hidden(history)


@SETTINGS
@given(histories())
def test_valid_results_are_never_moved(value: list[Msg]) -> None:
    history = load(value)
    result, _ = repair(history)
    request = dump(request_of(result))
    for tool_id, block in _valid_results(history):
        assert _answered(request, tool_id) == [block], tool_id


@SETTINGS
@given(histories())
def test_repair_is_idempotent_pure_and_reports_its_origins(value: list[Msg]) -> None:
    before = copy.deepcopy(value)
    history = load(value)
    result, report = repair(history)
    assert value == before
    again, second = repair(result)
    assert again is result and not second.changed
    assert len(report.origins) == len(result)
    for message, origin in zip(result, report.origins, strict=True):
        if origin is not None and message == history[origin]:
            continue
        assert report.changed  # a message that is not the stored one is accounted for
    kept = [o for o in report.origins if o is not None]
    assert kept == sorted(set(kept))  # stored order, each stored message at most once


@SETTINGS
@given(well_formed_histories())
def test_a_history_that_needs_nothing_comes_back_as_it_was(value: list[Msg]) -> None:
    history = load(value)
    result, report = repair(history)
    assert result == history and not report.changed


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(histories(), st.sampled_from(["js", "python", "indent", "request", "fixture"]))
def test_the_written_file_keeps_its_formatting(value: list[Msg], style: str) -> None:
    """Unchanged messages keep their bytes; the rest of the file (a request body's other keys) stays."""
    wrapped: Any = value
    if style == "request":
        wrapped = {"model": "claude-sonnet-4-5", "messages": value, "max_tokens": 8192}
    elif style == "fixture":
        wrapped = {"schema": "ctxmodel-fixture/1", "property": "p", "op": "normalize", "params": {"messages": value}}
    if style == "python":
        text = json.dumps(wrapped, ensure_ascii=False)
    elif style == "indent":
        text = json.dumps(wrapped, ensure_ascii=False, indent=2) + "\n"
    else:
        text = js_stringify(wrapped)
    raw = text.encode("utf-8")
    document = parse_document(raw, "f.json")
    result, report = repair(document.history)
    data = document.dump(result, report.origins)
    if not report.changed:
        assert data == raw
    assert dump(parse_document(data, "g.json").history) == dump(result)
    for message, origin in zip(result, report.origins, strict=True):
        if origin is not None and message is document.history[origin]:
            assert _bytes_of(value[origin], style) in data
    if style in ("js", "request", "fixture"):
        assert b"\n" not in data
    if style == "request":
        assert list(json.loads(data)) == ["model", "messages", "max_tokens"]


def _bytes_of(message: Msg, style: str) -> bytes:
    if style == "python":
        return json.dumps(message, ensure_ascii=False).encode()
    if style == "indent":
        return ("\n  ".join(json.dumps(message, ensure_ascii=False, indent=2).split("\n"))).encode()
    return js_stringify(message).encode()


def test_the_reference_choices_on_a_small_history() -> None:
    """Orphans become text, missing results are synthetic, a marker never receives results."""
    value = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"}],
         "truncationParent": "t1"},
        {"role": "user", "content": "[Sliding window truncation: 1 messages hidden to reduce context]",
         "isTruncationMarker": True, "truncationId": "t1", "ts": 5},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "X"},
                                     {"type": "text", "text": "next"}]},
    ]
    history = load(value)
    result, report = repair(history)
    out = dump(result)
    assert out[3] == value[2] and out[4] == value[3]  # the hidden result and the marker, unchanged
    assert out[2]["content"][0]["is_error"] is True and out[2]["content"][0]["tool_use_id"] == "toolu_a"
    assert "ts" not in out[2]  # the message before it has none
    assert out[5]["content"][0] == {"type": "text", "text": "Tool result:\nX"}
    assert report.origins == (0, 1, None, 2, 3, 4)
    assert report.lines() == [
        "new message after messages.1: missing-tool-result toolu_a: synthetic result in a new user message "
        "(before the marker or summary, which holds none)",
        "messages.4: unexpected-tool-use-id toolu_x: orphan result turned to text",
    ]
    dropped, _ = repair(history, orphans="drop")
    assert dump(dropped)[5]["content"] == [{"type": "text", "text": "next"}]


def test_a_legacy_summary_first_is_made_user_role_and_bad_ids_renamed_on_both_sides() -> None:
    value = [
        {"role": "user", "content": "old", "condenseParent": "c1"},
        {"role": "assistant", "content": [{"type": "text", "text": "Summary: ..."}], "isSummary": True,
         "condenseId": "c1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "functions.read:0", "name": "read",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "functions.read:0", "content": "ok"}]},
    ]
    result, report = repair(load(value))
    out = dump(result)
    assert out[1]["role"] == "user" and out[1]["isSummary"] is True
    assert out[2]["content"][0]["id"] == out[3]["content"][0]["tool_use_id"] == "functions_read_0"
    assert validate(request_of(result)) == []
    assert [c.rule for c in report.changes] == ["first-message-not-user", "invalid-tool-id", "invalid-tool-id"]


def test_thinking_moves_first_or_goes_when_the_last_tool_turn_has_none() -> None:
    think = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    use = {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {}}
    value: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [think, {"type": "text", "text": "t"},
                                          {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "t"}, think, use]},
    ]
    out = dump(repair(load(value))[0])
    assert out[3]["content"][0] == think  # moved first
    value[3]["content"] = [use]
    result, _ = repair(load(value))
    assert all(b.get("type") != "thinking" for m in dump(result) for b in m["content"] if isinstance(b, dict))
    assert validate(request_of(result)) == []
    assert repair(load(value), thinking=True)[1].unresolved  # declared on: nothing to put first


# ----------------------------------------------------------------------------------------------
# The command


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_repair_on_every_example(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = EXAMPLES / name
    out_file = tmp_path / "fixed.json"
    code, out, err = run(["repair", str(source), "-o", str(out_file)], capsys)
    assert code == 0 and out == ""
    stored, fixed = read(source), read(out_file)
    assert _hidden(fixed) == _hidden(stored)
    assert validate(request_of(fixed)) == []
    assert run(["validate", str(out_file)], capsys)[0] == 0
    if name == "clean-session.json":
        assert out_file.read_bytes() == source.read_bytes()
        assert "nothing to repair" in err
    else:
        assert re.search(r"^messages\.\d+: [a-z-]+ toolu_\w+: ", err, re.M), err
        assert "now passes the oracle" in err


def test_repair_on_a_file_with_condensed_and_truncated_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The orphan a condense left plus a truncation that cut a pair: both hidden runs are kept."""
    value = json.loads((EXAMPLES / "orphan-after-condense.json").read_text())
    value[8]["truncationParent"] = "trunc-1"  # hide the read_file call, keep its result visible
    value.insert(9, {"role": "user", "content": "[Sliding window truncation: 1 messages hidden to reduce context]",
                     "isTruncationMarker": True, "truncationId": "trunc-1", "ts": value[8]["ts"] + 1})
    path = tmp_path / "api_conversation_history.json"
    text = js_stringify(value)
    path.write_text(text)
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 1
    code, _, err = run(["repair", str(path), "--in-place"], capsys)
    assert code == 0, err
    assert Path(f"{path}.bak").read_text() == text
    fixed = read(path)
    assert _hidden(fixed) == _hidden(load(value)) and len(_hidden(fixed)) == 7
    assert validate(request_of(fixed)) == []
    assert "messages.7: unexpected-tool-use-id toolu_01VMVtWgTWr43ur178AJQKgg: orphan result turned to text" in err
    assert "messages.10: unexpected-tool-use-id toolu_01QT" in err
    assert b"\n" not in path.read_bytes() and b'","' in path.read_bytes()  # still compact JSON.stringify
    assert run(["repair", str(path), "--in-place"], capsys)[0] == 0  # nothing left: no second backup
    assert not Path(f"{path}.bak.2").exists()


def test_a_clean_file_is_never_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    value = json.loads((EXAMPLES / "clean-session.json").read_text())
    # Number text JSON.stringify never writes, and keys in an order the model does not keep.
    value[1]["content"][1]["input"] = {"path": "src/a.ts", "n": 1.0, "e": 1e2}
    value[2] = {"ts": value[2].pop("ts"), **value[2]}
    path = tmp_path / "clean.json"
    data = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    path.write_bytes(data)
    before = path.stat().st_mtime_ns
    code, out, err = run(["repair", str(path), "--in-place"], capsys)
    assert code == 0 and "nothing to repair" in err
    assert path.read_bytes() == data and path.stat().st_mtime_ns == before
    assert not Path(f"{path}.bak").exists()
    code, out, err = run(["repair", str(path), "-o", "-"], capsys)
    assert code == 0 and out.encode() == data


def test_a_changed_file_keeps_number_text_and_key_order_of_what_it_did_not_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        '[{"ts":1,"role":"user","content":[{"type":"text","text":"go"}]},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"r","input":{"n":1.0,"e":1e2}}],"ts":2},'
        '{"ts":3,"role":"user","content":[{"type":"text","text":"more"},'
        '{"type":"tool_result","tool_use_id":"toolu_a","content":"ok","x":1E+2}]}]'
    )
    path = tmp_path / "h.json"
    path.write_text(text)
    out_file = tmp_path / "o.json"
    assert run(["repair", str(path), "-o", str(out_file)], capsys)[0] == 0
    assert out_file.read_text() == (
        '[{"ts":1,"role":"user","content":[{"type":"text","text":"go"}]},'
        '{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"r","input":{"n":1.0,"e":1e2}}],"ts":2},'
        '{"ts":3,"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok","x":1E+2},'
        '{"type":"text","text":"more"}]}]'
    )


def test_repair_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = EXAMPLES / "clean-session.json"
    assert run(["repair", str(source), "-o", str(source)], capsys)[0] == 2
    assert run(["repair", str(source), "--in-place", "-o", str(tmp_path / "x.json")], capsys)[0] == 2
    code, out, err = run(["repair", str(EXAMPLES / "missing-parallel-result.json")], capsys)
    assert code == 0 and out == "" and "nothing written (use -o OUT or --in-place)" in err


def test_renaming_an_id_the_api_refuses_with_its_results_keeps_them_valid() -> None:
    """``toolu_.a`` fails the API's id pattern: a repair must rename it, and the call's result goes
    with it, so ``repair.valid-results-kept`` holds (a valid result moved to another call still fails
    it: the ``RelabelsInOrder`` witness)."""
    from ctxmodel.gate import judge
    from ctxmodel.properties.registry import get
    from ctxmodel.targets import open_target

    use = {"type": "tool_use", "id": "toolu_.a", "name": "read_file", "input": {"path": "src/a.ts"}}
    messages = [{"role": "user", "content": "h"}, {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_.a", "content": "x"}]}]
    target = open_target("reference")
    verdict = judge(get("repair.valid-results-kept"), target, {"messages": messages},
                    policies=dict(target.description.policies), tokenizer="zoo")
    assert not verdict.failures
    assert cast(ToolUse, repair(load(messages))[0][1].blocks[0]).id == "toolu__a"
