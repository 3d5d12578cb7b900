"""Bedrock Converse messages as a dialect: the codec loses nothing, the oracle names what the API
names (its texts, the message's path), and repair makes each kind of broken request acceptable while
keeping every other message as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import detect
from ctxmodel.dialects.bedrock_converse import (
    ALTERNATE_TEXT,
    FIRST_USER_TEXT,
    count,
    exceeds_text,
    expected_text,
    load,
    render,
    repair,
    validate,
)
from ctxmodel.tokens import get_counter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bedrock-converse"


def _messages(name: str) -> list[Any]:
    messages: list[Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))["messages"]
    return messages


def _user(text: str = "go") -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def _uses(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": i, "name": "read_file", "input": {}}}
                                             for i in ids]}


def _results(*ids: str, status: str = "success") -> dict[str, Any]:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": i, "content": [{"text": "ok"}], "status": status}}
                                        for i in ids]}


def _rules(messages: list[Any]) -> list[str]:
    return [v.rule for v in validate(load(messages))]


def test_converse_is_detected_and_anthropic_and_gemini_are_not_taken_for_it() -> None:
    assert detect(_messages("unanswered-parallel-call.json")).name == "bedrock-converse"
    anthropic = [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]}]
    assert detect(anthropic).name == "anthropic"
    assert detect([{"role": "user", "parts": [{"text": "hi"}]}]).name == "gemini"


def test_split_results_fail_with_the_apis_texts_at_their_paths() -> None:
    got = validate(load(_messages("unanswered-parallel-call.json")))
    assert [(v.rule, v.path) for v in got] == [
        ("missing-tool-result", "messages.2.content"), ("roles-alternate", "messages.3"),
        ("excess-tool-results", "messages.3.content")]
    assert got[0].message == (
        "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_sX1A7q9kipz4qAW36LUR1H")
    assert got[1].message == ALTERNATE_TEXT and got[2].message == exceeds_text(3)


def test_every_unanswered_id_is_listed_and_a_call_at_the_end_is_unanswered() -> None:
    got = validate(load([_user(), _uses("a", "b"), _user("more")]))
    assert [(v.rule, v.message) for v in got] == [("missing-tool-result", expected_text(2, ["a", "b"]))]
    assert _rules([_user(), _uses("a")]) == ["missing-tool-result"]


def test_first_message_blank_text_and_empty_error_results() -> None:
    got = validate(load([_uses("a"), _results("a")]))
    assert [(v.rule, v.message) for v in got] == [("first-message-user", FIRST_USER_TEXT)]
    assert _rules([{"role": "user", "content": [{"text": "  "}]}]) == ["blank-text"]
    empty = _results("a", status="error")
    empty["content"][0]["toolResult"]["content"] = []
    got = validate(load([_user(), _uses("a"), empty]))
    assert [v.message for v in got] == [
        "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."]


def test_a_paired_history_passes() -> None:
    done = {"role": "assistant", "content": [{"text": "done"}]}
    assert _rules([_user(), _uses("a", "b"), _results("b", "a"), done]) == []


def test_repair_joins_split_results_into_one_message() -> None:
    fixed, report = repair(load(_messages("unanswered-parallel-call.json")))
    assert validate(fixed) == [] and len(fixed) == 3
    assert [b["toolResult"]["toolUseId"] for b in fixed[2].raw["content"]] == [
        "tooluse_jQ912rboYgzgLULQpRxWot", "tooluse_sX1A7q9kipz4qAW36LUR1H"]
    assert [c.line() for c in report.changes] == ["messages.3: roles-alternate: joined to messages.2 (same role)"]


def test_repair_adds_missing_results_as_interrupted_errors_and_keeps_the_rest() -> None:
    source = load([_user(), _uses("a", "b"), _results("a")])
    fixed, _ = repair(source)
    assert validate(fixed) == []
    added = fixed[2].raw["content"][1]["toolResult"]
    assert added == {"toolUseId": "b", "content": [{"text": INTERRUPTED_TEXT}], "status": "error"}
    assert fixed[0] is source[0] and fixed[1] is source[1]
    fixed, _ = repair(load([_user(), _uses("a")]))
    assert validate(fixed) == [] and fixed[2].raw["role"] == "user"


@pytest.mark.parametrize(("orphans", "kept"), [("to_text", True), ("drop", False)])
def test_repair_turns_orphan_and_second_results_to_text_or_drops_them(orphans: str, kept: bool) -> None:
    messages = [_user(), _uses("a"), _results("a", "a", "zz"), {"role": "assistant", "content": [{"text": "ok"}]}]
    fixed, report = repair(load(messages), orphans=orphans)
    assert validate(fixed) == []
    texts = [b.get("text", "") for b in fixed[2].raw["content"]]
    assert any(t.startswith(CONVERSION_PREFIX) for t in texts) is kept
    assert next(c.action for c in report.changes) == "second result for the call dropped"


def test_render_and_count() -> None:
    history = load(_messages("unanswered-parallel-call.json"))
    view = render(history, highlight=("messages.2.content",))
    assert "[use jQ91…:read_file]" in view and view.splitlines()[2].startswith(">> #2 user")
    pieces = count(history, get_counter("zoo"))
    assert [p.type for p in pieces][:3] == ["text", "text", "toolUse"]
