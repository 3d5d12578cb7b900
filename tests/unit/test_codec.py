"""The lossless codec (contract §1): round-trip, no aliasing, no mutation, path-naming errors."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodel.codec import dump, dumps, load, loads, write
from ctxmodel.errors import HistoryError
from ctxmodel.model import Opaque, Text, ToolResult, ToolUse

# A local strategy of JSON-shaped histories: every known block kind, unknown block types, unknown
# keys on messages and blocks, stored nulls, nested JSON. Pairing is deliberately ignored: the
# codec must carry any history of the stored format, broken or not.

KEYS = st.sampled_from(["cache_control", "citations", "x", "messageId", "reasoning_details", "é", "a.b", "0"])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
IDS = st.sampled_from(["toolu_01A", "toolu_01B", "call_00_x", "bad id", ""])


def _with_extra(draw: st.DrawFn, obj: dict[str, Any], reserved: set[str]) -> dict[str, Any]:
    for key in draw(st.lists(KEYS, max_size=2, unique=True)):
        if key not in reserved:
            obj[key] = draw(JSON)
    return obj


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "image", "document", "search_result"]))
    if kind == "text":
        return _with_extra(draw, {"type": "text", "text": draw(st.text())}, {"type", "text"})
    if kind == "image":
        source = {"type": "base64", "media_type": "image/png", "data": draw(st.text("ABCD+/=", max_size=12))}
        return {"type": "image", "source": source}
    return _with_extra(draw, {"type": kind, "source": draw(JSON)}, {"type"})


@st.composite
def blocks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "tool_use", "tool_result", "thinking", "redacted", "image", "unknown"]))
    block: dict[str, Any]
    if kind == "text":
        block = {"type": "text", "text": draw(st.text())}
    elif kind == "tool_use":
        block = {"type": "tool_use", "id": draw(IDS), "name": draw(st.text(max_size=8)), "input": draw(JSON)}
    elif kind == "tool_result":
        block = {"type": "tool_result", "tool_use_id": draw(IDS)}
        content = draw(st.sampled_from(["absent", "string", "list"]))
        if content == "string":
            block["content"] = draw(st.text())
        elif content == "list":
            block["content"] = draw(st.lists(items(), max_size=3))
        error = draw(st.sampled_from(["absent", True, False, None]))
        if error != "absent":
            block["is_error"] = error
    elif kind == "thinking":
        block = {"type": "thinking", "thinking": draw(st.text())}
        signature = draw(st.sampled_from(["absent", "sig", None]))
        if signature != "absent":
            block["signature"] = signature
    elif kind == "redacted":
        block = {"type": "redacted_thinking", "data": draw(st.text())}
    elif kind == "image":
        block = {"type": "image", "source": draw(st.dictionaries(st.text(max_size=5), JSON, max_size=3))}
    else:
        block = {"type": draw(st.sampled_from(["reasoning", "server_tool_use", "thoughtSignature", "x"]))}
        block.update(draw(st.dictionaries(st.text(max_size=5).filter(lambda k: k != "type"), JSON, max_size=3)))
    return _with_extra(draw, block, set(block) | {"type"})


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    content: Any = draw(st.text()) if draw(st.booleans()) else draw(st.lists(blocks(), max_size=4))
    message: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant"])), "content": content}
    meta = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "ts": st.integers(0, 2**53) | st.floats(0, 1e13),
                "isSummary": st.booleans(),
                "condenseId": st.text(max_size=6),
                "condenseParent": st.text(max_size=6) | st.none(),
                "truncationId": st.text(max_size=6),
                "truncationParent": st.text(max_size=6),
                "isTruncationMarker": st.booleans(),
                "id": st.text(max_size=6),
                "reasoning_content": JSON,
            },
        )
    )
    message.update(meta)
    return _with_extra(draw, message, {"role", "content", *meta})


HISTORIES = st.lists(messages(), max_size=6)


@given(HISTORIES)
def test_round_trip_of_values_and_text(value: list[dict[str, Any]]) -> None:
    assert dump(load(value)) == value
    text = json.dumps(value, ensure_ascii=False)
    assert json.loads(dumps(loads(text))) == value
    assert dumps(loads(dumps(load(value)))) == dumps(load(value))


def scribble(value: Any) -> None:
    """Mutate every container inside ``value``, in place, at every depth."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value["scribbled"] = True
        if "type" in value:
            value["type"] = "scribbled"
    elif isinstance(value, list):
        for item in list(value):
            scribble(item)
        value.append("scribbled")


@given(HISTORIES)
def test_load_never_mutates_and_never_aliases_its_input(value: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(value)
    history = load(value)
    assert value == before
    scribble(value)
    assert dump(history) == before


@given(HISTORIES)
def test_dump_gives_fresh_containers(value: list[dict[str, Any]]) -> None:
    history = load(value)
    scribble(dump(history))
    assert dump(history) == value
    scribble(json.loads(dumps(history)))
    assert dump(history) == value


def test_known_blocks_become_model_classes() -> None:
    history = load(
        [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "x"}]},
                    {"type": "document", "source": {"type": "text", "data": "d"}},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "n", "input": {}}]},
        ]
    )
    result, document = history[0].blocks
    assert isinstance(result, ToolResult) and result.content == (Text("x"),)
    assert isinstance(document, Opaque) and document.type == "document"
    assert isinstance(history[1].blocks[0], ToolUse)


def test_stored_nulls_and_absent_keys_stay_apart() -> None:
    value = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": None}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": None}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
    ]
    assert dump(load(value)) == value


@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        ({}, "messages", "expected an array of messages, got an object"),
        ([[]], "messages.0", "expected a message object, got an array"),
        ([{"role": "tool", "content": ""}], "messages.0.role", 'expected "user" or "assistant", got "tool"'),
        (
            [{"role": "user"}],
            "messages.0.content",
            "expected a string or an array of blocks, got nothing (key missing)",
        ),
        ([{"role": "user", "content": [{"text": "x"}]}], "messages.0.content.0.type", "expected a block type string"),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": None}]},
            ],
            "messages.1.content.0.tool_use_id",
            "expected a string, got null",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": 3}]}],
            "messages.0.content.0.content",
            "expected a string or an array of blocks, got a number",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": [{"type": 1}]}]}],
            "messages.0.content.0.content.0.type",
            "expected a block type string, got a number",
        ),
        ([{"role": "user", "content": "", "truncationParent": 5}], "messages.0.truncationParent", "expected a string"),
        ([{"role": "user", "content": "", "ts": "noon"}], "messages.0.ts", "expected a number, got a string"),
        ([{"role": "user", "content": "", "x": float("nan")}], "messages.0.x", "expected a finite number"),
    ],
)
def test_refusals_name_the_json_path(value: Any, path: str, message: str) -> None:
    with pytest.raises(HistoryError) as caught:
        load(value)
    assert caught.value.path == path
    assert message in caught.value.message
    assert "\n" not in str(caught.value)


def test_text_errors_name_the_source() -> None:
    with pytest.raises(HistoryError) as caught:
        loads(b'[{"role": "user", "content": 1}]', source="h.json")
    assert str(caught.value) == "h.json: messages.0.content: expected a string or an array of blocks, got a number"
    with pytest.raises(HistoryError, match="out of range"):
        loads("[1e999]")


@given(HISTORIES, st.sampled_from([None, 0, 2]))
def test_write_streams_exactly_what_dumps_gives(value: list[dict[str, Any]], indent: int | None) -> None:
    history = load(value)
    stream = io.BytesIO()
    write(history, stream, indent=indent)
    text = dumps(history, indent=indent)
    try:
        assert stream.getvalue() == text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: written with escapes, the same value
        assert json.loads(stream.getvalue()) == json.loads(text)


@given(HISTORIES)
def test_loading_bytes_equals_loading_text(value: list[dict[str, Any]]) -> None:
    # Raw UTF-8 (the narrow latin-1 path) and \\u escapes (the plain path) must load the same history.
    for ensure_ascii in (False, True):
        text = json.dumps(value, ensure_ascii=ensure_ascii)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        assert loads(data) == loads(text)
        assert dump(loads(data)) == value


@pytest.mark.parametrize(
    "text",
    [
        '[{"role": "user", "content": "💻 Code \\u001b[31mred\\u001b[0m é ü 漢字"}]',
        '[{"role": "user", "content": "escaped \\u00e9 next to raw é"}]',
        '[{"role": "user", "content": "x", "clé": {"ключ": ["💻"]}}]',
        '[{"role": "user", "content": "a backslash then u: \\\\u00e9 and é"}]',
    ],
)
def test_non_ascii_documents_load_the_same_from_bytes(text: str) -> None:
    assert dump(loads(text.encode("utf-8"))) == json.loads(text)


def test_bad_utf8_inside_a_string_is_refused_with_its_byte() -> None:
    data = '[{"role": "user", "content": "💻 ok'.encode() + b"\xc3\x28" + b'"}]'
    with pytest.raises(HistoryError, match="invalid UTF-8 at byte 37"):
        loads(data)
