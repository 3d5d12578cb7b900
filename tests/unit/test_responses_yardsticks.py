"""The Responses judges of trim (contract §10.1, §10.8) read an answer in the way that breaks nothing:
an item equal to one without reasoning before it is taken for that one, never reported."""

from __future__ import annotations

from typing import Any

from ctxmodel.properties.responses_yardsticks import reasoning_findings, separations

USER = {"role": "user", "content": "go"}
SAID = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "h"}]}
RS = {"type": "reasoning", "id": "rs_1", "summary": []}
FC = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
KEEP: dict[str, str] = {}


def test_an_equal_item_without_reasoning_before_it_is_not_reported() -> None:
    history: list[Any] = [USER, RS, SAID, USER, SAID]
    assert reasoning_findings([USER, SAID], history, KEEP) == []


def test_an_item_returned_without_its_reasoning_under_keep_is_stripped() -> None:
    history: list[Any] = [USER, RS, SAID, USER]
    assert [code for code, _ in reasoning_findings([USER, SAID, USER], history, KEEP)] == ["reasoning-stripped"]
    assert reasoning_findings([USER, SAID, USER], history, {"trimReasoning": "strip"}) == []
    current = {"trimReasoning": "strip", "reasoningRequired": "current-turn"}
    assert [code for code, _ in reasoning_findings([USER, SAID], [USER, RS, SAID], current)] == [
        "current-reasoning-stripped"]


def test_an_edited_reasoning_item_is_reported() -> None:
    edited = {"type": "reasoning", "id": "rs_1"}
    codes = [code for code, _ in reasoning_findings([USER, edited, SAID], [USER, RS, SAID], KEEP)]
    assert codes[0] == "reasoning-edited"


def test_separating_reasoning_from_an_item_with_an_id_breaks_pairing() -> None:
    history: list[Any] = [USER, RS, FC, OUT, USER]
    assert separations([USER, FC, OUT, USER], history) == {("item-without-its-reasoning", "fc_1"): 1}
    assert separations([USER, RS, USER], history) == {("reasoning-without-its-item", "fc_1"): 1}
    assert separations(history, history) == {}
    assert separations([USER], history) == {}
