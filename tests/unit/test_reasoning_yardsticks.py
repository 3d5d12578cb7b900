"""Reasoning as contract §10.8 reads it, in both dialects: what a message carries, the message less
it, §10.2's match of a message less its reasoning (under either ``trimReasoning``), and the codes
``trim.reasoning-travels`` gives on answers built by hand."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ctxmodel.policies import resolve
from ctxmodel.properties.catalogue import Exchange
from ctxmodel.properties.chat_yardsticks import is_less_reasoning_of, less_reasoning, match_in_order, reasoning_of
from ctxmodel.properties.suite_reasoning import pair_with_input, reasoning_travels

CHAT = "openai-chat"
ANTHROPIC = "anthropic"

THINK: dict[str, Any] = {"type": "thinking", "thinking": "the file is long", "signature": "EqQBCkgIARABGAIiQL2s"}
REDACTED: dict[str, Any] = {"type": "redacted_thinking", "data": "AAEC"}
USE: dict[str, Any] = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
RESULT: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def _call(tool_id: str, reasoning: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    message["tool_calls"] = [{"id": tool_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    return message


def _tool(tool_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": tool_id, "content": "ok"}


def test_reasoning_is_read_in_both_dialects() -> None:
    assert reasoning_of(_call("a", "why"), CHAT) == ["why"]
    assert reasoning_of(_call("a", ""), CHAT) == [""]  # an empty reasoning_content is reasoning kept
    assert reasoning_of(_call("a"), CHAT) == []
    message = {"role": "assistant", "content": [THINK, REDACTED, USE]}
    assert reasoning_of(message, ANTHROPIC) == [THINK, REDACTED]
    assert less_reasoning(message, ANTHROPIC) == {"role": "assistant", "content": [USE]}
    assert less_reasoning(_call("a", "why"), CHAT) == _call("a")
    assert reasoning_of({"role": "user", "content": "hi"}, ANTHROPIC) == []


def test_a_message_less_its_reasoning_is_never_left_empty() -> None:
    assert is_less_reasoning_of(_call("a"), _call("a", "why"), CHAT)
    assert not is_less_reasoning_of(_call("a"), _call("a"), CHAT)  # nothing to strip: equal, not stripped
    assert not is_less_reasoning_of(_call("a", "other"), _call("a", "why"), CHAT)  # edited, not stripped
    whole = {"role": "assistant", "content": [THINK, USE]}
    assert is_less_reasoning_of({"role": "assistant", "content": [USE]}, whole, ANTHROPIC)
    only = {"role": "assistant", "content": [THINK]}
    assert not is_less_reasoning_of({"role": "assistant", "content": []}, only, ANTHROPIC)
    some = {"role": "assistant", "content": [THINK, REDACTED, USE]}
    assert not is_less_reasoning_of({"role": "assistant", "content": [THINK, USE]}, some, ANTHROPIC)


def test_order_matches_a_message_less_its_reasoning_and_nothing_else() -> None:
    history = [{"role": "user", "content": "go"}, _call("a", "why"), _tool("a")]
    stripped = [history[0], _call("a"), history[2]]
    assert match_in_order(stripped, history, partial=False, reasoning=CHAT) == ([0, 1, 2], -1, "")
    assert match_in_order(stripped, history, partial=False)[2] == "invented"
    edited = [history[0], _call("a", "because"), history[2]]
    assert match_in_order(edited, history, partial=False, reasoning=CHAT)[2] == "invented"
    moved = [history[0], history[2], _call("a")]
    assert match_in_order(moved, history, partial=False, reasoning=CHAT)[2] == "moved"


def test_of_two_messages_alike_but_for_their_reasoning_the_one_in_order_is_paired() -> None:
    first = {"role": "assistant", "content": "done", "reasoning_content": "one"}
    second = {"role": "assistant", "content": "done", "reasoning_content": "two"}
    user = {"role": "user", "content": "again"}
    history = [user, first, user, second]
    assert pair_with_input([user, {"role": "assistant", "content": "done"}], history[2:], CHAT, False) == [0, 1]
    assert pair_with_input([first, user, {"role": "assistant", "content": "done"}], history, CHAT, False) == [1, 2, 3]
    assert pair_with_input([{"role": "user", "content": "new"}], history, CHAT, False) == [None]


@attrs.define
class _Probe:
    policies: Mapping[str, str]


def _codes(history: list[dict[str, Any]], answer: list[dict[str, Any]], dialect: str, **policies: str) -> list[str]:
    probe = _Probe(resolve({"dialect": dialect, **policies}))
    exchange = Exchange("trim", {"messages": history, "maxTokens": 1000}, {"messages": answer})
    return [f.code for f in reasoning_travels(probe, exchange)]  # type: ignore[arg-type]


CHAT_HISTORY = [
    {"role": "user", "content": "fix it"}, _call("a", "look first"), _tool("a"),
    {"role": "assistant", "content": "fixed", "reasoning_content": "it was a typo"},
    {"role": "user", "content": "and the test"}, _call("b", "run it"), _tool("b"),
]


def test_the_codes_in_openai_chat() -> None:
    h = CHAT_HISTORY
    old = [h[0], _call("a"), h[2], {"role": "assistant", "content": "fixed"}, *h[4:]]
    current = [*h[:5], _call("b"), h[6]]
    assert _codes(h, h, CHAT) == []
    assert _codes(h, old, CHAT) == ["reasoning-stripped"]
    assert _codes(h, old, CHAT, trimReasoning="strip") == []
    assert _codes(h, old, CHAT, trimReasoning="strip", reasoningRequired="current-turn") == []
    assert _codes(h, current, CHAT, trimReasoning="strip") == []
    assert _codes(h, current, CHAT, trimReasoning="strip", reasoningRequired="current-turn") == [
        "current-reasoning-stripped"]
    cut = [*h[:5], _call("b", "run"), h[6]]
    assert _codes(h, cut, CHAT, trimReasoning="strip") == ["reasoning-edited"]
    added = [h[0], {**h[1], "reasoning_content": "look first"}, h[2], {**h[3], "reasoning_content": ""}, *h[4:]]
    assert _codes(h, added, CHAT) == ["reasoning-edited"]
    assert _codes(h, h[4:], CHAT) == []  # messages dropped whole carry nothing to judge


def test_the_codes_in_anthropic() -> None:
    user: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "fix it"}]}
    calls: dict[str, Any] = {"role": "assistant", "content": [THINK, REDACTED, USE]}
    results: dict[str, Any] = {"role": "user", "content": [RESULT]}
    history = [user, calls, results]
    assert _codes(history, history, ANTHROPIC) == []
    stripped: list[dict[str, Any]] = [user, {"role": "assistant", "content": [USE]}, results]
    assert _codes(history, stripped, ANTHROPIC) == ["reasoning-stripped"]
    assert _codes(history, stripped, ANTHROPIC, trimReasoning="strip") == []
    assert _codes(history, stripped, ANTHROPIC, trimReasoning="strip", reasoningRequired="current-turn") == [
        "current-reasoning-stripped"]
    rebuilt: dict[str, Any] = {"type": "thinking", "thinking": THINK["thinking"]}  # its signature lost
    unsigned: list[dict[str, Any]] = [user, {"role": "assistant", "content": [rebuilt, REDACTED, USE]}, results]
    assert _codes(history, unsigned, ANTHROPIC, trimReasoning="strip") == ["reasoning-edited"]
    # redacted_thinking filtered out, the thinking block kept: a part of the reasoning is not the reasoning
    filtered: list[dict[str, Any]] = [user, {"role": "assistant", "content": [THINK, USE]}, results]
    assert _codes(history, filtered, ANTHROPIC, trimReasoning="strip") == ["reasoning-edited"]
    cut: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "fix"}]}, calls, results]
    assert _codes(history, cut, ANTHROPIC, trimPartial="yes") == []  # text cut, reasoning whole
