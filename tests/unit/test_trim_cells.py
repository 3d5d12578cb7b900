"""The ``trim`` cells: the shapes read from each dialect's wire JSON, the budget point, and a ci draw
of the trim strategies reaching the reasoning cells in every dialect."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings

from ctxmodel import partition
from ctxmodel.partition import CELLS, cells_of, history_shapes, judged

Msg = dict[str, Any]


def test_anthropic_shapes() -> None:
    think = {"type": "thinking", "thinking": "t", "signature": "s"}
    use = {"type": "tool_use", "id": "a", "name": "f", "input": {}}
    use2 = {"type": "tool_use", "id": "b", "name": "f", "input": {}}
    msgs: list[Msg] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [think, use, use2]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        {"role": "assistant", "content": [think, {"type": "text", "text": "done"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]},
    ]
    assert history_shapes(msgs, "anthropic") == {
        "pair", "parallel", "unanswered", "orphan", "reasoning-call", "reasoning-message"}
    assert history_shapes([{"role": "user", "content": "hi"}], "anthropic") == {"plain"}


def test_chat_shapes() -> None:
    msgs: list[Msg] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "reasoning_content": "why",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "done", "reasoning_content": ""},
    ]
    assert history_shapes(msgs) == {"pair", "reasoning-call"}  # empty reasoning carries none
    msgs[-1]["reasoning_content"] = "so"
    assert history_shapes(msgs, "openai-chat") == {"pair", "reasoning-call", "reasoning-message"}


def test_responses_shapes_bind_reasoning_to_the_item_after_it() -> None:
    items: list[Msg] = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        {"type": "function_call_output", "call_id": "c9", "output": "late"},
    ]
    assert history_shapes(items) == {"reasoning-call", "parallel", "pair", "unanswered", "orphan"}
    items.insert(5, {"type": "reasoning", "id": "rs_2", "summary": []})
    assert "reasoning-message" in history_shapes(items, "openai-responses")
    # a reasoning item before an output binds to nothing the shapes name
    assert history_shapes([{"type": "reasoning", "id": "r", "summary": []},
                           {"type": "function_call_output", "call_id": "c", "output": ""}]) == {"orphan"}


def test_converse_shapes_read_blocks_by_their_key() -> None:
    messages: list[Msg] = [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}},
                                          {"toolUse": {"toolUseId": "a", "name": "f", "input": {}}},
                                          {"toolUse": {"toolUseId": "b", "name": "f", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": [{"text": "ok"}]}},
                                     {"toolResult": {"toolUseId": "z", "content": [{"text": "late"}]}}]},
    ]
    assert history_shapes(messages) == {"reasoning-call", "parallel", "pair", "unanswered", "orphan"}
    assert history_shapes(messages[:1]) == {"plain"}


def test_gemini_shapes_read_parts() -> None:
    contents: list[Msg] = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"text": "plan", "thought": True},
                                    {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"},
                                    {"functionCall": {"name": "g", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}},
                                   {"functionResponse": {"name": "z", "response": {}}}]},
    ]
    assert history_shapes(contents) == {"reasoning-call", "parallel", "pair", "unanswered", "orphan"}
    assert history_shapes(contents[:1]) == {"plain"}


def test_a_request_reaches_each_shape_at_its_point() -> None:
    items = [{"role": "user", "content": "go"},
             {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]
    assert cells_of("trim", {"messages": items, "_budget": {"at": "floor", "delta": 0}}) == {"trim:floor/unanswered"}
    assert cells_of("trim", {"messages": items, "_budget": {"at": "floor", "delta": -1}}) == {
        "trim:below-floor/unanswered"}
    assert cells_of("trim", {"messages": items, "_budget": {"at": "newest", "k": 1}}) == {
        "trim:suffix-cut/unanswered"}
    assert cells_of("trim", {"messages": items, "_budget": {"at": "all", "delta": 0}}) == {"trim:whole/unanswered"}
    assert cells_of("trim", {"messages": items, "_budget": {"at": "all", "delta": -3}}) == {
        "trim:just-over/unanswered"}
    assert cells_of("trim", {"messages": items, "maxTokens": 9}) == {"trim:given/unanswered"}
    assert cells_of("trim", {"messages": items}) == {"trim:unbounded/unanswered"}
    assert cells_of("trim", {"messages": items, "_budget": {"at": "elsewhere"}}) == {"trim:unclassified"}
    assert set(CELLS["trim"]) == {f"trim:{p}/{s}" for p in partition.TRIM_POINTS for s in partition.TRIM_SHAPES}
    assert judged("trim.keeps-order", "trim") == CELLS["trim"]


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat", "openai-responses", "bedrock-converse", "gemini"])
def test_the_trim_histories_reach_reasoning_bound_to_calls_and_answers(dialect: str) -> None:
    """A draw of 200 histories (fewer than the trim properties of a ci check draw together) meets
    reasoning on both sides, pairs and parallel calls."""
    from ctxmodel.strategies.trim import trim_histories

    seen: Counter[str] = Counter()

    @seed(0)
    @settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(trim_histories(dialect))
    def draw(messages: list[Msg]) -> None:
        seen.update(history_shapes(messages, dialect))

    draw()
    assert {"pair", "parallel", "reasoning-call", "reasoning-message"} <= set(seen), seen
