"""OpenAI Responses items as a dialect: the codec loses nothing, the oracle names what the provider
names (its texts, the item's path), and repair makes each kind of broken request acceptable while
keeping every other item as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import detect, get
from ctxmodel.dialects.openai_responses import count, dump, load, render, repair, validate
from ctxmodel.errors import HistoryError
from ctxmodel.tokens import get_counter
from ctxmodel.tokens.responses import count_responses

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "openai-responses"


def _items(name: str) -> list[Any]:
    value = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    items: list[Any] = value["input"] if isinstance(value, dict) else value
    return items


def _user(text: str = "go") -> dict[str, Any]:
    return {"role": "user", "content": text}


def _call(call_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def _output(call_id: str, output: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _reasoning(rid: str = "rs_1", **extra: Any) -> dict[str, Any]:
    return {"type": "reasoning", "id": rid, "summary": [], **extra}


def _said(text: str = "done") -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def _rules(items: list[Any]) -> list[tuple[str, str]]:
    return [(v.rule, v.path) for v in validate(load(items))]


# -- the codec ------------------------------------------------------------------------------------

_json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                              max_size=3), max_leaves=6)
_item = st.one_of(
    st.builds(_call, st.text(max_size=6)),
    st.builds(_output, st.text(max_size=6), _json),
    st.builds(_reasoning, st.text(max_size=6)),
    st.builds(_user, st.text(max_size=10)),
    st.dictionaries(st.sampled_from(["type", "id", "status", "x-extra", "role", "content"]), _json, max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_item, max_size=8))
def test_dump_load_is_lossless(items: list[dict[str, Any]]) -> None:
    assert dump(load(items)) == items


def test_load_refuses_only_what_is_not_an_array_of_objects() -> None:
    with pytest.raises(HistoryError) as caught:
        load([_user(), "text"])
    assert caught.value.path == "input.1"
    with pytest.raises(HistoryError):
        load({"input": []})


def test_detection_reads_items_as_responses_and_chat_as_chat() -> None:
    assert detect(_items("clean-reasoning-calls.json")).name == "openai-responses"
    assert detect([_user(), _call("c1"), _output("c1")]).name == "openai-responses"
    chat = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"}]
    assert detect(chat).name == "openai-chat"
    assert detect([{"role": "user", "content": "hi"}]).name == "anthropic"


# -- the oracle: the provider's texts and paths ------------------------------------------------------


def test_the_clean_example_passes() -> None:
    assert validate(load(_items("clean-reasoning-calls.json"))) == []


def test_reasoning_left_without_its_item_is_named_with_the_providers_text() -> None:
    found = validate(load(_items("reasoning-separated-by-trim.json")))
    assert [(v.rule, v.path) for v in found] == [("reasoning-without-following-item", "input.1")]
    assert found[0].message == (
        "Item 'rs_0a1f2c3d4e5f60718293a4b5c6d7e8fa' of type 'reasoning' was provided without its required "
        "following item.")


@pytest.mark.parametrize("after", [None, _user(), _output("c1"), _reasoning("rs_2", summary=[]),
                                   {"type": "message", "role": "developer", "content": "x"}])
def test_what_does_not_follow_a_reasoning_item(after: dict[str, Any] | None) -> None:
    items = [_user(), _call("c1"), _output("c1"), _reasoning()] + ([after] if after else [])
    assert ("reasoning-without-following-item", "input.3") in _rules(items)


@pytest.mark.parametrize("after", [_call("c9"), _said(), {"type": "web_search_call", "id": "ws_1"},
                                   {"role": "assistant", "content": "plain"}])
def test_what_follows_a_reasoning_item(after: dict[str, Any]) -> None:
    items = [_user(), _reasoning(), after]
    assert all(rule != "reasoning-without-following-item" for rule, _ in _rules(items))


def test_pairing_texts() -> None:
    found = validate(load([_user(), _call("call_A"), _call("call_B"), _output("call_B"), _output("call_Z")]))
    by_rule = {v.rule: v for v in found}
    assert by_rule["unanswered-function-call"].message == "No tool output found for function call call_A."
    assert by_rule["unanswered-function-call"].path == "input.1"
    assert by_rule["orphan-function-call-output"].message == (
        "No tool call found for function call output with call_id call_Z.")
    assert by_rule["orphan-function-call-output"].path == "input.4"


def test_an_output_before_its_call_is_an_orphan_and_the_call_unanswered() -> None:
    assert _rules([_user(), _output("c1"), _call("c1")]) == [
        ("orphan-function-call-output", "input.1"), ("unanswered-function-call", "input.2")]


def test_an_output_may_come_later_than_the_next_item() -> None:
    assert _rules([_user(), _call("c1"), _said("working"), _output("c1")]) == []


def test_missing_summary_and_shapes() -> None:
    found = validate(load([_user(), {"type": "reasoning", "id": "rs_1"}, _call("c1"), _output("c1")]))
    assert [(v.rule, v.path, v.message) for v in found] == [
        ("missing-summary", "input.1.summary", "Missing required parameter: 'input[1].summary'.")]
    shapes = _rules([{"role": "robot", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "f"},
                     _output("c"), {"role": "system", "content": [{"type": "input_image", "image_url": "u"}]}])
    assert ("item-shape", "input.0.role") in shapes
    assert ("item-shape", "input.1.arguments") in shapes
    assert ("item-shape", "input.3.content.0") in shapes


def test_duplicates_and_empty() -> None:
    assert ("duplicate-function-call-output", "input.3") in _rules([_user(), _call("c"), _output("c"), _output("c")])
    assert ("duplicate-call-id", "input.2") in _rules([_user(), _call("c"), _call("c"), _output("c")])
    assert _rules([]) == [("empty-input", "input")]


def test_unknown_item_types_are_kept_and_not_judged() -> None:
    items = [_user(), {"type": "item_reference", "id": "msg_1"}, {"type": "compaction", "encrypted_content": "x"}]
    assert _rules(items) == []
    assert dump(load(items)) == items


# -- repair: what the oracle accepts, every other item unchanged -----------------------------------


@pytest.mark.parametrize("name", ["reasoning-separated-by-trim.json", "orphan-output-after-trim.json",
                                  "unanswered-parallel-call.json", "reasoning-without-summary.json"])
def test_repair_makes_each_example_acceptable(name: str) -> None:
    items = _items(name)
    result, report = repair(load(items))
    assert validate(result) == []
    assert report.changed and not report.unresolved
    kept = [dump([item])[0] for item, origin in zip(result, report.origins, strict=True)
            if origin is not None and items[origin] == item.raw]
    changed = {c.index for c in report.changes if not c.created}
    assert len(kept) >= len(items) - len(changed)


def test_repair_answers_an_unanswered_call_after_its_run_of_calls() -> None:
    items = [_user(), _reasoning(), _call("a"), _call("b"), _output("b"), _said()]
    result, report = repair(load(items))
    assert dump(result) == [_user(), _reasoning(), _call("a"), _call("b"),
                            {"type": "function_call_output", "call_id": "a", "output": INTERRUPTED_TEXT},
                            _output("b"), _said()]
    assert report.origins == (0, 1, 2, 3, None, 4, 5)
    assert [c.line() for c in report.changes] == [
        "new item after input.2: unanswered-function-call a: synthetic output added (interrupted)"]


def test_repair_drops_reasoning_it_cannot_pair_and_keeps_the_rest() -> None:
    items = [_user(), _reasoning("rs_old"), _user("next"), _reasoning("rs_new"), _call("c"), _output("c")]
    result, _ = repair(load(items))
    assert dump(result) == [_user(), _user("next"), _reasoning("rs_new"), _call("c"), _output("c")]


def test_repair_turns_an_orphan_output_into_text_or_drops_it() -> None:
    items = [_user(), _output("gone", "42 files")]
    as_text, _ = repair(load(items))
    assert dump(as_text)[1] == {"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": f"{CONVERSION_PREFIX}\n42 files"}]}
    dropped, _ = repair(load(items), orphans="drop")
    assert dump(dropped) == [_user()]


def test_repair_adds_an_empty_summary_and_drops_a_second_output() -> None:
    items = [_user(), {"type": "reasoning", "id": "rs", "encrypted_content": "e"}, _call("c"), _output("c"),
             _output("c", "again")]
    result, _ = repair(load(items))
    assert dump(result) == [_user(), {"type": "reasoning", "id": "rs", "encrypted_content": "e", "summary": []},
                            _call("c"), _output("c")]


def test_repair_of_an_acceptable_request_changes_nothing() -> None:
    items = _items("clean-reasoning-calls.json")
    result, report = repair(load(items))
    assert dump(result) == items and not report.changed


# -- the view and the count -------------------------------------------------------------------------


def test_render_marks_calls_outputs_and_reasoning() -> None:
    text = render(load([_user(), _reasoning("rs_9", encrypted_content="e"), _call("call_1"), _output("call_1")]),
                  highlight=["input.1"])
    lines = text.splitlines()
    assert lines[1].startswith(">> #1 reasoning") and "[reasoning rs_9 +enc]" in lines[1]
    assert "[use " in lines[2] and "[result " in lines[3]


def test_count_sees_every_piece_and_never_drops() -> None:
    counter = get_counter("zoo")
    items = _items("clean-reasoning-calls.json")
    pieces = count(load(items), counter)
    assert [p.path for p in pieces] == [f"input.{n}" for n in range(len(items))]
    assert all(p.tokens > 0 for p in pieces)
    assert count_responses(counter, items) >= count_responses(counter, items[:-1])
    longer = [_user(), {**_call("c"), "arguments": "{" + "x" * 64 + "}"}]
    assert count_responses(counter, longer) > count_responses(counter, [_user(), _call("c")])
    assert get("openai-responses").count(load(items), counter) == pieces
