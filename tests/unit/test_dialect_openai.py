"""OpenAI Chat Completions as a dialect: the codec loses nothing, the oracle names what the provider
names (its texts, the message's path), and repair makes both kinds of broken request acceptable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import detect, get
from ctxmodel.dialects.openai_chat import ORPHAN_TEXT, count, dump, load, render, repair, validate
from ctxmodel.errors import HistoryError
from ctxmodel.oracle import Violation
from ctxmodel.tokens import get_counter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "openai"
UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "The following tool_call_ids did not have response messages: "
)


def _messages(name: str) -> list[Any]:
    value = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    messages: list[Any] = value["messages"] if isinstance(value, dict) else value
    return messages


def _call(call_id: str, name: str = "read_file", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _assistant(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [_call(i) for i in ids]}


def _tool(call_id: str, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "go"}


# -- a local strategy: JSON of the dialect's shapes, unknown keys and odd values included ------------

_json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                              max_size=3), max_leaves=6)
_extra = st.dictionaries(st.sampled_from(["name", "refusal", "reasoning_content", "x-trace", "audio"]), _json,
                         max_size=2)
_part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
    st.fixed_dictionaries({"type": st.just("image_url"),
                           "image_url": st.fixed_dictionaries({"url": st.text(max_size=20)})}),
    st.dictionaries(st.text(max_size=5), _json, max_size=2),
)
_content = st.none() | st.text(max_size=30) | st.lists(_part, max_size=3)
_ids = st.sampled_from(["call_a", "call_b", "call_c", ""])
_tool_call = st.one_of(
    st.builds(lambda i, n, a: _call(i, n, a), _ids, st.text(max_size=8), st.text(max_size=20)),
    st.dictionaries(st.sampled_from(["id", "type", "function", "index"]), _json, max_size=3),
)


def _message(role: str, content: Any, calls: list[Any] | None, tool_id: Any, extra: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content}
    if calls is not None:
        out["tool_calls"] = calls
    if role == "tool":
        out["tool_call_id"] = tool_id
    out.update({k: v for k, v in extra.items() if k not in out})
    return out


messages_json = st.lists(
    st.builds(
        _message,
        st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "critic"]),
        _content,
        st.none() | st.lists(_tool_call, max_size=3),
        _ids | st.none() | st.integers(),
        _extra,
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(messages_json)
def test_load_then_dump_gives_back_every_drawn_history(value: list[dict[str, Any]]) -> None:
    before = json.dumps(value)
    history = load(value)
    assert dump(history) == value
    assert [list(m) for m in dump(history)] == [list(m) for m in value]  # key order kept
    assert json.dumps(value) == before  # the input is not touched
    validate(history)  # judges every shape without raising
    render(history, highlight=[v.path for v in validate(history)])


@settings(max_examples=100, deadline=None)
@given(messages_json)
def test_repair_leaves_no_pairing_violation(value: list[dict[str, Any]]) -> None:
    result, report = repair(load(value))
    pairing = {"tool-without-tool-calls", "tool-call-id-not-found", "duplicate-tool-message", "unanswered-tool-calls",
               "empty-tool-calls"}
    assert not [v for v in validate(result) if v.rule in pairing]
    assert list(report.unresolved) == validate(result)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_each_example_round_trips_and_is_detected_as_openai(name: str) -> None:
    value = _messages(name)
    assert dump(load(value)) == value
    assert detect(value).name == "openai-chat"


def test_load_refuses_only_what_is_not_messages() -> None:
    with pytest.raises(HistoryError, match=r"messages\.1\.role"):
        load([USER, {"content": "no role"}])
    with pytest.raises(HistoryError, match=r"messages\.0"):
        load(["text"])
    with pytest.raises(HistoryError):
        load({"messages": []})


# -- the oracle: texts and paths ---------------------------------------------------------------------


def test_the_clean_example_passes() -> None:
    assert validate(load(_messages("clean-parallel-calls.json"))) == []


def test_an_orphan_tool_message_gets_the_provider_text_at_its_path() -> None:
    found = validate(load(_messages("orphan-tool-after-trim.json")))
    assert found == [Violation("tool-without-tool-calls", "messages.1", ORPHAN_TEXT)]
    assert "preceeding" in found[0].message  # the provider's spelling, kept
    assert found[0].ids == ("call_Rf5mWq8zLb2cXy7dN1tK",)


def test_an_unanswered_call_is_named_at_its_assistant_message() -> None:
    found = validate(load(_messages("unanswered-call.json")))
    assert found == [Violation("unanswered-tool-calls", "messages.2", UNANSWERED + "call_Gt9aLm4hVc1oZf6sJr0e")]


def test_one_message_per_assistant_message_naming_every_unanswered_call() -> None:
    found = validate(load([USER, _assistant("a", "b", "c"), _tool("b"), USER, _assistant("d"), USER]))
    assert [(v.rule, v.path, v.message) for v in found] == [
        ("unanswered-tool-calls", "messages.1", UNANSWERED + "a, c"),
        ("unanswered-tool-calls", "messages.4", UNANSWERED + "d"),
    ]


def test_a_user_message_between_the_call_and_its_answer_breaks_both() -> None:
    found = validate(load([USER, _assistant("a"), USER, _tool("a")]))
    assert [(v.rule, v.path) for v in found] == [
        ("unanswered-tool-calls", "messages.1"),
        ("tool-without-tool-calls", "messages.3"),
    ]


def test_a_wrong_id_in_the_run_and_a_second_answer() -> None:
    found = validate(load([USER, _assistant("a"), _tool("a"), _tool("zz"), _tool("a"), USER]))
    assert [(v.rule, v.path, v.message) for v in found] == [
        ("tool-call-id-not-found", "messages.3",
         "Invalid parameter: 'tool_call_id' of 'zz' not found in 'tool_calls' of previous message."),
        ("duplicate-tool-message", "messages.4",
         "Invalid parameter: Duplicate value for 'tool_call_id' of 'a', in messages[2] and messages[4]."),
    ]


def test_a_final_assistant_message_with_calls_is_unanswered() -> None:
    found = validate(load([USER, _assistant("a")]))
    assert [(v.rule, v.path) for v in found] == [("unanswered-tool-calls", "messages.1")]


def test_malformed_calls_are_named_by_their_path() -> None:
    bad_arguments = {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
    no_id = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    empty_name = {"id": "c", "type": "function", "function": {"name": "", "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [bad_arguments, no_id, empty_name]}
    found = validate(load([USER, message, _tool("a"), _tool("c"), USER]))
    assert [(v.rule, v.path) for v in found] == [
        ("tool-call-shape", "messages.1.tool_calls.0"),
        ("tool-call-shape", "messages.1.tool_calls.1"),
        ("empty-function-name", "messages.1.tool_calls.2"),
    ]
    assert "function.arguments: expected a string" in found[0].message
    assert "id: expected a string" in found[1].message
    assert found[2].message.startswith("Invalid 'messages[1].tool_calls[2].function.name': empty string.")


def test_empty_tool_calls_and_missing_content() -> None:
    found = validate(load([USER, {"role": "assistant", "content": None, "tool_calls": []},
                           {"role": "assistant", "content": None}]))
    assert [(v.rule, v.path) for v in found] == [
        ("empty-tool-calls", "messages.1.tool_calls"),
        ("missing-content", "messages.2.content"),
    ]
    assert found[0].message.startswith("Invalid 'messages[1].tool_calls': empty array.")


def test_tool_content_takes_text_parts_only() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    found = validate(load([USER, _assistant("a"), _tool("a", [{"type": "text", "text": "x"}, image]), USER]))
    assert [(v.rule, v.path) for v in found] == [("content-shape", "messages.2.content.1")]


def test_an_empty_request_is_refused() -> None:
    assert [v.rule for v in validate(())] == ["empty-messages"]


# -- repair ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["orphan-tool-after-trim.json", "unanswered-call.json"])
def test_repair_makes_each_bad_example_pass_the_oracle(name: str) -> None:
    history = load(_messages(name))
    result, report = repair(history)
    assert report.changed and not report.unresolved
    assert validate(result) == []
    kept = [m for m, origin in zip(result, report.origins, strict=True) if origin is not None
            and m is history[origin]]
    assert len(kept) == len(history) - (1 if name.startswith("orphan") else 0)


def test_the_orphan_becomes_user_text_or_goes() -> None:
    history = load(_messages("orphan-tool-after-trim.json"))
    result, report = repair(history)
    assert result[1].raw == {"role": "user", "content": f"{CONVERSION_PREFIX}\n" + history[1].raw["content"]}
    assert report.lines() == ["messages.1: tool-without-tool-calls call_Rf5mWq8zLb2cXy7dN1tK: orphan tool message "
                              "turned to user text"]
    dropped, _ = repair(history, orphans="drop")
    assert len(dropped) == len(history) - 1 and validate(dropped) == []


def test_the_synthetic_answer_goes_after_the_run() -> None:
    history = load(_messages("unanswered-call.json"))
    result, report = repair(history)
    assert [m.role for m in result] == ["developer", "user", "assistant", "tool", "tool", "user", "assistant"]
    assert result[4].raw == {"role": "tool", "tool_call_id": "call_Gt9aLm4hVc1oZf6sJr0e", "content": INTERRUPTED_TEXT}
    assert report.origins[4] is None
    assert report.lines() == ["new message after messages.3: unanswered-tool-calls call_Gt9aLm4hVc1oZf6sJr0e: "
                              "synthetic answer added (interrupted)"]


def test_an_orphan_inside_a_run_is_moved_after_it() -> None:
    result, _ = repair(load([USER, _assistant("a", "b"), _tool("zz"), _tool("a"), _tool("b"), USER]))
    assert [m.role for m in result] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert validate(result) == []


def test_a_clean_history_comes_back_as_itself() -> None:
    history = load(_messages("clean-parallel-calls.json"))
    result, report = repair(history)
    assert result is history and not report.changed


# -- view and count ----------------------------------------------------------------------------------


def test_render_marks_calls_answers_and_the_oracle_paths() -> None:
    history = load(_messages("unanswered-call.json"))
    text = render(history, highlight=[v.path for v in validate(history)])
    lines = text.splitlines()
    assert lines[2].startswith(">> #2 assistant") and "[use Wb7n…:run_command]" in lines[2]
    assert "[result Wb7n…]" in lines[3]
    fixed, _ = repair(history)
    assert "(synthetic)" in render(fixed).splitlines()[4]


def test_count_counts_text_calls_and_tool_messages() -> None:
    counter = get_counter("o200k")
    history = load([{"role": "system", "content": "be brief"}, USER, _assistant("a"), _tool("a", "done")])
    pieces = {c.path: c for c in count(history, counter)}
    assert pieces["messages.0.content"].tokens == counter.raw_text("be brief")
    assert pieces["messages.2.tool_calls.0"].tokens == counter.raw_text("Tool: read_file\nArguments: {}")
    assert pieces["messages.3"].tokens == counter.raw_text("Tool Result (a)\ndone")
    assert get("openai-chat").count(history, counter) == count(history, counter)


def test_the_dialects_are_core_modules() -> None:
    """They import nothing of Hypothesis, the properties, the strategies, the engine or the CLI."""
    import ast
    import re

    upper = re.compile(r"(hypothesis|ctxmodel\.(properties|strategies|gate|engine|events|parallel|runs|report|fuzz|"
                       r"cli|pytest_plugin))(\.|$)")
    folder = Path(__file__).resolve().parents[2] / "ctxmodel" / "dialects"
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert names and not [n for n in names if upper.match(n)], path.name
