"""The visibility predicate and the effective history (contract §2, domain §2.1, §7 B)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxmodel.codec import dump, load
from ctxmodel.visibility import effective, visible_mask


def msg(text: str, role: str = "user", **meta: Any) -> dict[str, Any]:
    return {"role": role, "content": text, **meta}


def summary(cid: str | None, text: str = "S", **meta: Any) -> dict[str, Any]:
    out = msg(text, isSummary=True, **meta)
    if cid is not None:
        out["condenseId"] = cid
    return out


def marker(tid: str | None, **meta: Any) -> dict[str, Any]:
    out = msg("[Sliding window truncation: 1 messages hidden to reduce context]", isTruncationMarker=True, **meta)
    if tid is not None:
        out["truncationId"] = tid
    return out


def mask(value: list[dict[str, Any]]) -> list[bool]:
    return visible_mask(load(value))


def test_empty_history() -> None:
    assert visible_mask(()) == []
    assert effective(()) == ()


def test_untagged_history_is_all_visible() -> None:
    """§2: with no summary and no tags, nothing is hidden."""
    assert mask([msg("a"), msg("b", "assistant"), msg("c")]) == [True, True, True]


def test_only_last_summary_and_after_are_candidates() -> None:
    """§2: everything before the last summary is out, tagged or not; earlier summaries too."""
    h = [msg("a"), summary("s1"), msg("b", "assistant"), summary("s2"), msg("c")]
    assert mask(h) == [False, False, False, True, True]


def test_last_summary_always_visible_whatever_its_tags() -> None:
    """§2: the last summary is always visible, even tagged with an existing summary and marker."""
    h = [summary("s1"), marker("t1"), summary("s2", condenseParent="s1", truncationParent="t1"), msg("x")]
    assert mask(h) == [False, False, True, True]


def test_condense_parent_of_existing_summary_hides() -> None:
    """§2: condenseParent naming a summary that exists anywhere (even one before the last) hides."""
    h = [summary("s1"), summary("s2"), msg("a", condenseParent="s1"), msg("b", condenseParent="s2"), msg("c")]
    assert mask(h) == [False, True, False, False, True]


def test_condense_parent_without_summary_hides_nothing() -> None:
    """§2: a parent that no longer exists hides nothing (rewind restores, domain §7 B6)."""
    h = [msg("a", condenseParent="gone"), msg("b", "assistant", condenseParent="gone")]
    assert mask(h) == [True, True]


def test_condense_id_on_a_non_summary_is_not_a_summary() -> None:
    """§2: only an ``isSummary`` message's condenseId names a summary."""
    h = [msg("a", condenseId="s1"), msg("b", condenseParent="s1")]
    assert mask(h) == [True, True]


def test_truncation_parent_of_existing_marker_hides() -> None:
    """§2: truncationParent naming an existing marker hides; the marker itself stays visible."""
    h = [msg("a"), marker("t1"), msg("b", "assistant", truncationParent="t1"), msg("c", truncationParent="t1")]
    h.append(msg("d"))
    assert mask(h) == [True, True, False, False, True]


def test_truncation_parent_of_missing_marker_hides_nothing() -> None:
    h = [msg("a", truncationParent="t9"), marker("t1"), msg("b", truncationParent="t2")]
    assert mask(h) == [True, True, True]


def test_marker_id_on_a_non_marker_is_not_a_marker() -> None:
    h = [msg("a", truncationId="t1"), msg("b", truncationParent="t1")]
    assert mask(h) == [True, True]


def test_marker_before_last_summary_still_exists() -> None:
    """§2: "exists" means anywhere in the input, hidden or not."""
    h = [marker("t1"), summary("s1"), msg("a", truncationParent="t1"), msg("b")]
    assert mask(h) == [False, True, False, True]


def test_marker_and_summary_without_ids_hide_nothing() -> None:
    h = [marker(None), msg("a", truncationParent="x"), msg("b", condenseParent="y")]
    assert mask(h) == [True, True, True]
    h2 = [summary(None), msg("a", condenseParent="y")]
    assert mask(h2) == [True, True]


def test_nested_truncation_hides_inner_marker() -> None:
    """§2: a marker tagged by a later truncation is hidden like any other message."""
    h = [marker("t1", truncationParent="t2"), msg("a", truncationParent="t1"), marker("t2"), msg("b")]
    assert mask(h) == [False, False, True, True]


def test_effective_is_the_subsequence_of_input_objects() -> None:
    """§2: order-preserving subsequence that edits no content (same frozen objects)."""
    h = load([msg("a", condenseParent="s1"), summary("s1"), msg("b", truncationParent="t"), marker("t"), msg("c")])
    e = effective(h)
    assert [m.content for m in e] == ["S", "[Sliding window truncation: 1 messages hidden to reduce context]", "c"]
    assert e[0] is h[1] and e[1] is h[3] and e[2] is h[4]


def test_effective_accepts_any_sequence() -> None:
    h = load([msg("a"), msg("b")])
    assert effective(list(h)) == h


# --- properties -----------------------------------------------------------------------------------

_IDS = st.sampled_from(["s1", "s2", "t1", "t2", "x"])


@st.composite
def tagged_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Small histories dense in summaries, markers and (often dangling) parent tags."""
    out: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 8))):
        m: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant"])), "content": f"m{i}"}
        kind = draw(st.sampled_from(["plain", "plain", "summary", "marker"]))
        if kind == "summary":
            m["isSummary"] = draw(st.sampled_from([True, True, False]))
            if draw(st.booleans()):
                m["condenseId"] = draw(_IDS)
        elif kind == "marker":
            m["isTruncationMarker"] = draw(st.sampled_from([True, True, False]))
            if draw(st.booleans()):
                m["truncationId"] = draw(_IDS)
        if draw(st.booleans()):
            m["condenseParent"] = draw(_IDS)
        if draw(st.booleans()):
            m["truncationParent"] = draw(_IDS)
        out.append(m)
    return out


def _expected(value: list[dict[str, Any]]) -> list[bool]:
    """Contract §2 restated on the raw JSON, independently of the implementation."""
    summaries = {m["condenseId"] for m in value if m.get("isSummary") is True and "condenseId" in m}
    markers = {m["truncationId"] for m in value if m.get("isTruncationMarker") is True and "truncationId" in m}
    last = max((i for i, m in enumerate(value) if m.get("isSummary") is True), default=-1)
    return [
        i == last
        or (i > last and m.get("condenseParent") not in summaries and m.get("truncationParent") not in markers)
        for i, m in enumerate(value)
    ]


@given(tagged_histories())
def test_mask_matches_contract_restated(value: list[dict[str, Any]]) -> None:
    assert mask(value) == _expected(value)


@given(tagged_histories())
def test_effective_is_subsequence_idempotent_and_pure(value: list[dict[str, Any]]) -> None:
    """§2 subsequence, domain §7 B2 (last summary first), B5 (pure, ``E(E(H)) == E(H)``)."""
    h = load(value)
    before = copy.deepcopy(dump(h))
    e = effective(h)
    assert dump(h) == before
    kept = [m for m, keep in zip(h, visible_mask(h), strict=True) if keep]
    assert len(e) == len(kept) and all(a is b for a, b in zip(e, kept, strict=True))
    assert effective(e) == e
    summaries = [m for m in h if m.is_summary]
    if summaries:
        assert e[0] is summaries[-1]
