"""The contract's data has one home, and every reader of visibility agrees with it (contract §1, §2, §4).

The reference's predicate (``ctxmodel.visibility``, on the model) is written apart from the JSON one
(``ctxmodel.contract_data``) that the yardsticks, the partition and the strategies' labels read, so
that a bug in one is seen by the other; these tests hold the two to the same answers, on the
project's own strategies and on the edge ids the copies used to disagree on. The numbers and texts
below are restated by hand on purpose: they check the shared values against the contract's words.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmodel import contract_data, partition
from ctxmodel.codec import load
from ctxmodel.errors import HistoryError
from ctxmodel.properties import yardsticks as yardstick
from ctxmodel.strategies import effective_histories, histories, realistic_histories
from ctxmodel.strategies.labels import visibility as label_visibility
from ctxmodel.visibility import visible_mask as reference_mask

Msg = dict[str, Any]


def json_masks(history: list[Msg]) -> dict[str, list[bool]]:
    """Every JSON-side reading of visibility, by who reads it."""
    return {
        "contract_data": contract_data.visible_mask(history),
        "yardstick": yardstick.visible_mask(history),
        "partition": [why is None for why in partition.hidden_reasons(history)],
        "labels": [why is None for why in label_visibility(history)],
    }


def assert_all_agree(history: list[Msg]) -> list[bool]:
    """The reference's mask, after checking every JSON reading gives the same one."""
    expected = reference_mask(load(history))
    for who, got in json_masks(history).items():
        assert got == expected, f"{who}: {got} != reference {expected} for {history}"
    return expected


# -- on the project's own strategies ---------------------------------------------------------------

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(histories())
def test_readers_agree_on_drawn_histories(history: list[Msg]) -> None:
    assert_all_agree(history)


@_SETTINGS
@given(effective_histories())
def test_readers_agree_on_every_effective_cell(history: list[Msg]) -> None:
    assert_all_agree(history)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(realistic_histories())
def test_readers_agree_on_realistic_histories(history: list[Msg]) -> None:
    assert_all_agree(history)


_IDS = st.sampled_from(["", "a", "b"]) | st.none()


@st.composite
def colliding_tag_histories(draw: st.DrawFn) -> list[Msg]:
    """Short histories whose summaries, markers and parent tags share a three-id alphabet, the empty
    string and null included: summary and marker ids collide, tags name both or neither."""
    out: list[Msg] = []
    for n in range(draw(st.integers(1, 7))):
        m: Msg = {"role": draw(st.sampled_from(["user", "assistant"])), "content": f"m{n}"}
        kind = draw(st.sampled_from(["plain", "summary", "marker", "both"]))
        if kind in ("summary", "both"):
            m["isSummary"] = True
            m["condenseId"] = draw(_IDS)
        if kind in ("marker", "both"):
            m["isTruncationMarker"] = True
            m["truncationId"] = draw(_IDS)
        for tag in ("condenseParent", "truncationParent"):
            if draw(st.booleans()):
                m[tag] = draw(_IDS)
        out.append(m)
    return out


@settings(max_examples=300, deadline=None)
@given(colliding_tag_histories())
def test_readers_agree_on_colliding_and_empty_ids(history: list[Msg]) -> None:
    assert_all_agree(history)


# -- the edge ids, by hand (contract §2: "names a summary that exists") -----------------------------


def user(text: str, **meta: Any) -> Msg:
    return {"role": "user", "content": text, **meta}


def test_an_empty_string_condense_id_is_an_id() -> None:
    history = [user("a"), user("S", isSummary=True, condenseId=""), user("b", condenseParent=""), user("c")]
    assert assert_all_agree(history) == [False, True, False, True]
    assert partition.hidden_reasons(history) == ["before-summary", None, "condense", None]


def test_an_empty_string_truncation_id_is_an_id() -> None:
    history = [user("a", truncationParent=""), user("M", isTruncationMarker=True, truncationId=""), user("b")]
    assert assert_all_agree(history) == [False, True, True]
    assert partition.visible_kind(history) == "truncated"


def test_null_ids_name_nothing() -> None:
    history = [
        user("S", isSummary=True, condenseId=None),
        user("M", isTruncationMarker=True, truncationId=None),
        user("b", condenseParent=None, truncationParent=None),
    ]
    assert assert_all_agree(history) == [True, True, True]
    assert partition.visible_kind(history) == "plain"


def test_a_summary_without_an_id_still_cuts_what_precedes_it() -> None:
    history = [user("a"), user("S", isSummary=True), user("b")]
    assert assert_all_agree(history) == [False, True, True]


def test_ids_are_per_kind_when_a_summary_and_a_marker_share_one() -> None:
    history = [
        user("S", isSummary=True, condenseId="x"),
        user("M", isTruncationMarker=True, truncationId="x"),
        user("by-summary", condenseParent="x"),
        user("by-marker", truncationParent="x"),
        user("names-a-marker-as-summary", condenseParent="y"),
        user("N", isTruncationMarker=True, truncationId="y"),
    ]
    assert assert_all_agree(history) == [True, True, False, False, True, True]


def test_one_message_both_summary_and_marker() -> None:
    history = [
        user("a"),
        user("SM", isSummary=True, condenseId="x", isTruncationMarker=True, truncationId="z"),
        user("b", truncationParent="z"),
        user("c", condenseParent="x"),
    ]
    assert assert_all_agree(history) == [False, True, False, False]


def test_the_last_summary_is_visible_whatever_it_is_tagged_with() -> None:
    history = [
        user("M", isTruncationMarker=True, truncationId="t"),
        user("S", isSummary=True, condenseId="s", condenseParent="s", truncationParent="t"),
        user("b"),
    ]
    assert assert_all_agree(history) == [False, True, True]


def test_a_marker_before_the_last_summary_still_exists() -> None:
    history = [user("M", isTruncationMarker=True, truncationId="t"), user("S", isSummary=True),
               user("b", truncationParent="t")]
    assert assert_all_agree(history) == [False, True, False]


@pytest.mark.parametrize("value", [7, 0, 1.5, True, ["x"], {"x": 1}])
def test_a_non_string_id_names_nothing_on_json(value: Any) -> None:
    """The stored format refuses these (contract §1), so the reference never sees them; the JSON
    readers must still answer alike, and the answer is the model's: a non-string id is no id."""
    history = [
        user("M", isTruncationMarker=True, truncationId=value),
        user("b", truncationParent=value),
        user("S2", isSummary=True, condenseId=value),
        user("c", condenseParent=value),
    ]
    with pytest.raises(HistoryError):
        load(history)
    masks = json_masks(history)
    assert set(map(tuple, masks.values())) == {(False, False, True, True)}, masks
    assert partition.effective_cells(history) == {"effective:condenseParent/dangling/after",
                                                 "effective:truncationParent/dangling/before"}
    assert partition.visible_kind(history) == "dangling"


def test_flags_are_true_only() -> None:
    """``isSummary: 1`` is not a summary (contract §1 wants a boolean; ``=== true`` in the field)."""
    history = [user("a"), user("S", isSummary=1, condenseId="s"), user("b", condenseParent="s")]
    masks = json_masks(history)
    assert set(map(tuple, masks.values())) == {(True, True, True)}, masks


# -- the numbers and texts, restated from the contract ----------------------------------------------


def test_the_budget_is_floor_of_nine_tenths_minus_the_reserve() -> None:
    assert contract_data.DEFAULT_RESERVE == 8192
    assert contract_data.allowed_tokens(100_000, 30_000) == 60_000
    assert contract_data.allowed_tokens(200_000, 0) == 180_000 - 8192
    assert contract_data.allowed_tokens(200_000, -5) == 180_000 - 8192
    assert contract_data.allowed_tokens(30, 1) == 26  # floor(27.000000000000004) - 1 = 26 in floats too
    assert contract_data.allowed_tokens(11, 1) == 8


@given(st.integers(-50_000, 2_000_000), st.integers(1, 100_000))
def test_window_for_is_the_smallest_window_reaching_the_budget(allowed: int, reserve: int) -> None:
    window = contract_data.window_for(allowed, reserve)
    assert window >= 1
    assert contract_data.allowed_tokens(window, reserve) >= allowed
    if window > 1:
        assert contract_data.allowed_tokens(window - 1, reserve) < allowed


def test_the_fixed_texts() -> None:
    assert contract_data.FAILED_PREFIX == "Context window recovery failed"
    assert contract_data.marker_text(3) == "[Sliding window truncation: 3 messages hidden to reduce context]"
    assert contract_data.notice_text(12) == "\n[Tool result truncated: 12 characters removed to fit the context budget]"
    assert contract_data.INTERRUPTED_TEXT == "Tool execution was interrupted before completion."
    assert contract_data.CONVERSION_PREFIX == "Tool result:"
    assert contract_data.FLOOR_CHARS == 200


def test_every_reader_holds_the_one_value() -> None:
    """The names kept for their callers are the shared objects, not copies that could drift."""
    from ctxmodel.normalize import SYNTHETIC_TEXT
    from ctxmodel.properties import json_reading
    from ctxmodel.recover import DEFAULT_RESERVE, FAILED_PREFIX, allowed_tokens, marker_text, notice_text
    from ctxmodel.strategies.cells.recover import (  # type: ignore[attr-defined]  # used there, not exported
        notice_text as cells_notice,
    )
    from ctxmodel.strategies.histories import marker_text as histories_marker
    from ctxmodel.strategies.recovery import allowed_tokens as strategies_allowed
    from ctxmodel.strategies.stored import INTERRUPTED

    assert allowed_tokens is yardstick.allowed_tokens is strategies_allowed is contract_data.allowed_tokens
    assert DEFAULT_RESERVE == yardstick.DEFAULT_RESERVE == partition.DEFAULT_RESERVE == 8192
    assert FAILED_PREFIX is yardstick.FAILED_PREFIX is contract_data.FAILED_PREFIX
    assert marker_text is histories_marker is contract_data.marker_text
    assert notice_text is cells_notice is contract_data.notice_text
    assert SYNTHETIC_TEXT is INTERRUPTED is contract_data.INTERRUPTED_TEXT
    assert json_reading.CONVERSION_PREFIX is contract_data.CONVERSION_PREFIX
    assert partition.hidden_reasons is contract_data.hidden_reasons
    assert yardstick.visible_mask is contract_data.visible_mask


# -- tool ids ----------------------------------------------------------------------------------------


def test_tool_use_ids_keep_repeats_and_read_only_assistant_calls() -> None:
    calls: Msg = {"role": "assistant", "content": [
        {"type": "text", "text": "x"},
        {"type": "tool_use", "id": "a", "name": "n", "input": {}},
        {"type": "tool_use", "id": "b", "name": "n", "input": {}},
        {"type": "tool_use", "id": "a", "name": "n", "input": {}},
        {"type": "tool_use", "name": "n", "input": {}},
        {"type": "tool_use", "id": 5, "name": "n", "input": {}},
    ]}
    assert contract_data.tool_use_ids(calls) == ["a", "b", "a"]
    assert contract_data.distinct_tool_use_ids(calls) == ["a", "b"]
    assert contract_data.tool_use_ids({**calls, "role": "user"}) == []
    assert contract_data.tool_use_ids({"role": "assistant", "content": "text"}) == []
