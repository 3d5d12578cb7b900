"""The strategies produce every feature, every shape, valid well-formed histories."""

from __future__ import annotations

import collections
import json
import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ctxmodel import partition
from ctxmodel.codec import load
from ctxmodel.normalize import normalize
from ctxmodel.oracle import validate
from ctxmodel.recover import notice_text
from ctxmodel.render import render
from ctxmodel.strategies import (
    FEATURES,
    RECOVERY_CASES,
    features,
    histories,
    normalize_histories,
    realistic_histories,
    recovery_case,
    recovery_requests,
    texts,
    well_formed_histories,
)
from ctxmodel.strategies.ids import ID_STYLES, id_style, tool_ids
from ctxmodel.strategies.labels import feature_table, visibility
from ctxmodel.strategies.recovery import allowed_tokens, count_request, recovery_shapes
from ctxmodel.strategies.text import SPECIAL_TOKENS, cheap_tail_texts, padding_runs
from ctxmodel.tokens import get_counter
from ctxmodel.visibility import effective

Msg = dict[str, Any]


def report(text: str) -> None:
    """Tables go to the real stdout, so they show in ``pytest -s`` and in CI logs alike."""
    print(text, file=sys.__stdout__, flush=True)


def _strict_json(value: Any) -> None:
    """Strict JSON (no NaN/Infinity) whose text is UTF-8 encodable (no lone surrogates)."""
    json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")


def _generate(strategy: st.SearchStrategy[Any], n: int, each: Callable[[Any], None]) -> int:
    """Run ``each`` on ``n`` freshly generated examples (no shrinking, no database)."""
    seen = [0]

    # derandomize: the same examples every run, so a share near a threshold cannot flake.
    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        seen[0] += 1
        each(value)

    run()
    return seen[0]


@pytest.mark.slow  # a thousand histories: a minute on a busy 2-core machine
def test_every_feature_in_at_least_two_percent_of_1000_histories() -> None:
    counts: collections.Counter[str] = collections.Counter()

    def each(history: list[Msg]) -> None:
        _strict_json(history)
        load(history)  # contract §1: the codec accepts every drawn history
        counts.update(features(history))

    total = _generate(histories(), 1000, each)
    report(f"\nfeatures in {total} examples of histories():\n" + feature_table(counts, total))
    rare = {name: counts[name] for name in FEATURES if counts[name] < 0.02 * total}
    assert total >= 1000
    assert not rare, f"features under 2%: {rare}"


#: Specific shapes ``find()`` must reach within its default budget.
SHAPES = (
    "image-between-parallel-results",
    "orphan-after-condense",
    "orphan-after-truncation",
    "orphan-two-turns-back",
    "dangling-truncation-parent",
    "duplicate-tool-use-across-messages",
    "trailing-tool-use",
    "legacy-assistant-summary",
    "parallel-missing-result",
    "id-bad",
)


#: find()'s own default budget (max_examples 2000), made repeatable; shrinking is judged separately.
REACH = settings(max_examples=2000, derandomize=True, database=None, phases=[Phase.generate])
SHRINK = settings(max_examples=2000, derandomize=True, database=None)


@pytest.mark.parametrize("shape", SHAPES)
def test_find_reaches_shape(shape: str) -> None:
    found = find(histories(), lambda h: shape in features(h), settings=REACH)
    assert shape in features(found)


def test_ids_shrink_to_toolu_a() -> None:
    # Readable minimal histories (ids toolu_a, toolu_a2; text "h") are shown and asserted in
    # tests/quality/test_strategies_shrinking.py, where shrinking is exercised on five broken normalizers.
    assert find(tool_ids(), lambda _: True, settings=SHRINK) == "toolu_a"
    assert find(tool_ids(), lambda t: id_style(t) == "bad", settings=SHRINK) == "toolu_.a"


def _request(history: list[Msg]) -> Any:
    return normalize(effective(load(history)))


@settings(max_examples=150)
@given(well_formed_histories(pending=True))
def test_well_formed_histories_pass_the_oracle_and_normalize_keeps_them(history: list[Msg]) -> None:
    _strict_json(history)
    visible = effective(load(history))
    request = normalize(visible)
    assert validate(request) == [], render(visible)
    assert request == visible, "normalize changed a well-formed history (contract §3.7, A10)"


def test_well_formed_features_cover_summaries_markers_thinking_images() -> None:
    counts: collections.Counter[str] = collections.Counter()
    total = _generate(well_formed_histories(pending=True), 300, lambda h: counts.update(features(h)))
    wanted = ("summary", "truncation-marker", "thinking-on-tool-turn", "image", "parallel-calls",
              "trailing-tool-use", "result-content-list", "result-content-absent", "unknown-metadata-key")
    report("\nfeatures in well_formed_histories():\n" + feature_table(counts, total, wanted))
    assert all(counts[name] > 0 for name in wanted), {n: counts[n] for n in wanted}
    broken = ("orphan-after-user", "missing-result", "duplicate-result", "id-bad", "consecutive-assistant")
    assert not any(counts[name] for name in broken), {n: counts[n] for n in broken}


def test_recovery_requests_cover_every_case_of_contract_4() -> None:
    counts: collections.Counter[str] = collections.Counter()

    def each(request: dict[str, Any]) -> None:
        assert set(request) == {"messages", "contextWindow", "maxTokens", "systemPrompt"}
        assert isinstance(request["contextWindow"], int) and request["contextWindow"] >= 1
        assert isinstance(request["maxTokens"], int) and isinstance(request["systemPrompt"], str)
        _strict_json(request)
        load(request["messages"])
        counts[recovery_case(request)] += 1
        if request["maxTokens"] <= 0:
            counts["maxTokens<=0"] += 1

    total = _generate(recovery_requests(), 250, each)
    names = (*RECOVERY_CASES, "maxTokens<=0")
    report("\nrecovery cases:\n" + feature_table(counts, total, names))
    assert all(counts[name] >= 0.02 * total for name in names), dict(counts)


def test_recovery_budget_edges() -> None:
    # contract §4: reserve 8192 when maxTokens <= 0; a count equal to allowed is within.
    assert allowed_tokens(10_000, 0) == 9000 - 8192
    assert allowed_tokens(10_000, -5) == 9000 - 8192
    assert allowed_tokens(10_000, 1000) == 8000
    history: list[Msg] = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "x " * 200},
        {"role": "user", "content": "world"},
    ]
    total = count_request(history)
    window = 1
    while allowed_tokens(window, 100) < total:
        window += 1
    at_edge = {"messages": history, "contextWindow": window, "maxTokens": 100, "systemPrompt": ""}
    assert allowed_tokens(window, 100) == total
    assert recovery_case(at_edge) == "within"
    assert recovery_case({**at_edge, "contextWindow": window - 2}) == "little-over"
    assert recovery_case({**at_edge, "contextWindow": window // 2}) == "far-over"
    assert recovery_case({**at_edge, "contextWindow": 100}) == "allowed<=0"
    # one message is both first and last visible: nothing may be hidden (contract §4.3)
    alone = {**at_edge, "messages": history[1:2], "contextWindow": 115}
    assert recovery_case(alone) == "impossible"


def test_realistic_histories_have_the_shape_of_real_sessions() -> None:
    shares: list[float] = []

    def each(history: list[Msg]) -> None:
        assert len(history) >= 100
        load(history)
        users = [m for m in history[1:] if m["role"] == "user" and isinstance(m["content"], list)]
        shaped = [m for m in users if len(m["content"]) == 2 and m["content"][0]["type"] == "tool_result"
                  and m["content"][1]["type"] == "text"]
        shares.append(len(shaped) / max(1, len(users)))
        uses = sum(1 for m in history for b in (m["content"] if isinstance(m["content"], list) else [])
                   if b["type"] == "tool_use")
        assert 0.7 <= uses / (len(history) / 2) <= 1.05, "about one tool pair per turn (domain §1.4)"

    n = _generate(realistic_histories(), 8, each)
    report(f"\nrealistic: share of user messages [tool_result, text] over {n} histories: "
           f"min {min(shares):.2f}, mean {sum(shares) / len(shares):.2f}")
    assert min(shares) >= 0.7


def test_texts_kinds_sizes_and_encoding() -> None:
    seen: collections.Counter[str] = collections.Counter()

    def each(text: str) -> None:
        text.encode("utf-8")  # no lone surrogates
        assert len(text) <= 40
        if any(t in text for t in SPECIAL_TOKENS):
            seen["special"] += 1
        if len(text) >= 20 and not any(c.isspace() for c in text):
            seen["long-no-space"] += 1
        if len(text) >= 20 and len(set(text)) == 1:
            seen["one-char-run"] += 1
        if any(ord(c) > 0xFFFF for c in text):
            seen["astral"] += 1

    _generate(texts(), 300, each)
    assert all(seen[k] > 0 for k in ("special", "long-no-space", "one-char-run", "astral")), dict(seen)
    big = find(texts(min_size=5000, max_size=9000), lambda _: True)
    assert len(big) == 5000
    assert find(texts(nonblank=True), lambda _: True).strip()
    with pytest.raises(ValueError, match="kinds"):
        texts(kinds=["poetry"])


def test_id_styles() -> None:
    assert [id_style(x) for x in ("toolu_01A", "toolu_vrtx_01", "call_abc", "call_00_x", "tooluse_Q",
                                  "srvtoolu_1", "functions.read:0", "weird")] == [
        "toolu", "toolu_vrtx", "call", "call_00", "tooluse", "srvtoolu", "bad", "other"]
    assert set(ID_STYLES) == {"toolu", "toolu_vrtx", "call", "call_00", "tooluse", "srvtoolu"}


def test_features_read_a_hand_written_history() -> None:
    history: list[Msg] = [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "r", "input": {}},
                                          {"type": "tool_use", "id": "toolu_b", "name": "r", "input": {}}],
         "condenseParent": "c1"},
        {"role": "user", "content": "summary", "isSummary": True, "condenseId": "c1"},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
            {"type": "tool_result", "tool_use_id": "toolu_b"}]},
    ]
    assert visibility(history) == ["before-summary", "before-summary", None, None]
    f = features(history)
    assert {"orphan-after-condense", "orphan-after-user", "parallel-calls", "image-between-results",
            "result-content-absent", "summary", "condense-parent", "user-string-content", "id-toolu"} <= f
    # the image sits between results whose tool_use is not the previous message: not "of one parallel call"
    assert "image-between-parallel-results" not in f


def _shares_no_objects(value: Any) -> None:
    """A target that mutates one block must not change another (purity checks, contract §1)."""
    ids: set[int] = set()

    def walk(item: Any) -> None:
        if isinstance(item, dict | list):
            assert id(item) not in ids
            ids.add(id(item))
            for inner in item.values() if isinstance(item, dict) else item:
                walk(inner)

    walk(value)


def test_drawn_histories_share_no_objects() -> None:
    _generate(histories(), 100, _shares_no_objects)


# -- recovery shapes (the recover zoo bugs hide where the generic draw rarely goes) -----------------

#: The labels ``recovery_shapes`` judges a request by; ``degrade`` shows as its three parts.
_SHAPE_LABELS = ("condensed-within", "reserve-gap", "degrade-image", "degrade-floor", "dense-mix",
                 "single-giant", "marker-in-pair", "impossible-long")


def _shape_counts(n: int, **knobs: Any) -> tuple[collections.Counter[str], int]:
    counts: collections.Counter[str] = collections.Counter()

    def each(request: dict[str, Any]) -> None:
        _strict_json(request)
        load(request["messages"])
        _shares_no_objects(request["messages"])  # shapes build messages from shared pieces
        counts.update(recovery_shapes(request))

    return counts, _generate(recovery_requests(**knobs), n, each)


def test_every_recovery_shape_is_drawn_in_the_mixed_draw() -> None:
    # Each shape is a few per cent of the mixed draw most recover properties run on, judged from the
    # request (not from how it was drawn). Only presence is asserted: the shares move with the
    # constants Hypothesis mines from whatever modules the session loaded (the table shows them).
    counts, total = _shape_counts(300)
    report("\nrecovery shapes:\n" + feature_table(counts, total, _SHAPE_LABELS))
    assert all(counts[name] > 0 for name in _SHAPE_LABELS), dict(counts)


def test_condensed_within_is_common_when_only_within_is_drawn() -> None:
    # recover.within-budget-unchanged draws the within case alone; a recount counting condensed
    # messages shows only when the slack is smaller than what they count (contract §2, §4.2).
    counts, total = _shape_counts(60, cases=("within",))
    assert counts["condensed-within"] >= 0.1 * total, dict(counts)


def test_degrade_shape_is_recovered_by_degrading_a_list_text_item() -> None:
    # The degrade shape's budget lies where the reference must cut the giant (contract §4.5), so an
    # implementation that collapses list content or drops its image shows.
    from ctxmodel.recover import recover

    def degrades_an_item(r: dict[str, Any]) -> bool:
        got = recover(load(r["messages"]), context_window=r["contextWindow"], max_tokens=r["maxTokens"],
                      system_prompt=r["systemPrompt"], new_id=lambda: "t")
        return got.error is None and any(d.path.count(".") == 5 for d in got.degraded)

    found = find(recovery_requests(cases=("far-over",)),
                 lambda r: "degrade-image" in recovery_shapes(r) and degrades_an_item(r), settings=REACH)
    assert "degrade-image" in recovery_shapes(found)


def test_reserve_gap_lies_between_the_two_budgets() -> None:
    # maxTokens < 0: over the contract budget (reserve 8192), within floor(0.9W) - maxTokens (Roo's ||).
    found = find(recovery_requests(cases=("little-over",)), lambda r: "reserve-gap" in recovery_shapes(r),
                 settings=REACH)
    count = count_request(found["messages"], found["systemPrompt"])
    window, max_tokens = found["contextWindow"], found["maxTokens"]
    assert max_tokens < 0
    assert 0 < allowed_tokens(window, max_tokens) < count <= (9 * window) // 10 - max_tokens


@pytest.mark.parametrize("shape", _SHAPE_LABELS)
def test_find_reaches_recovery_shape(shape: str) -> None:
    found = find(recovery_requests(), lambda r: shape in recovery_shapes(r), settings=REACH)
    assert shape in recovery_shapes(found)


def test_normalize_cells_draw_orphans_of_every_content_form() -> None:
    forms: collections.Counter[str] = collections.Counter()

    def each(history: list[Msg]) -> None:
        calls = {b["id"] for m in history if isinstance(m.get("content"), list)
                 for b in m["content"] if b.get("type") == "tool_use"}
        for m in history:
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_result" and b["tool_use_id"] not in calls:
                    content = b.get("content")
                    form = "string" if isinstance(content, str) else "list" if isinstance(content, list) else "absent"
                    forms[form] += 1

    _generate(normalize_histories(cells=["normalize:orphan"], generic_percent=0), 80, each)
    assert all(forms[k] > 0 for k in ("string", "list", "absent")), dict(forms)


def test_dangling_tags_split_pairs_every_way() -> None:
    # Which half of a pair names a dangling parent (the call or its results), and with which tag: a
    # cut that takes either tag for hidden splits the pair its own way (§2, §4.4).
    kinds: collections.Counter[tuple[str, str]] = collections.Counter()

    def each(request: dict[str, Any]) -> None:
        msgs = request["messages"]
        parents = _parents(msgs)
        found: set[tuple[str, str]] = set()
        for i in range(1, len(msgs) - 1):
            before, here = msgs[i - 1], msgs[i]
            if not (isinstance(before.get("content"), list)
                    and any(b.get("type") == "tool_use" for b in before["content"])):
                continue
            for tag in ("condenseParent", "truncationParent"):
                dangles = [m.get(tag) is not None and m.get(tag) not in parents for m in (before, here)]
                if dangles == [True, False]:
                    found.add(("call", tag))
                elif dangles == [False, True]:
                    found.add(("results", tag))
        kinds.update(found)

    _generate(recovery_requests(cells=("recover:over-hide/dangling/*",)), 60, each)
    assert len(kinds) == 4 and min(kinds.values()) >= 10, dict(kinds)  # each in a sixth of the requests


def test_half_the_degrade_only_budgets_leave_less_than_a_notice_to_degrade() -> None:
    # What hiding alone leaves is the reference's count plus what its degradation freed; a budget a
    # few tokens under it is where a notice's own cost decides whether a cut shrinks (§4.5).
    shallow = [0, 0]

    def each(request: dict[str, Any]) -> None:
        got = partition.reference_recover(request["messages"], request["contextWindow"], request["maxTokens"],
                                         request["systemPrompt"])
        if got.error is not None or not got.degraded:
            return
        shallow[1] += 1
        hidden_only = got.new_context_tokens + sum(d.before_tokens - d.after_tokens for d in got.degraded)
        shallow[0] += hidden_only - got.allowed <= 24

    _generate(recovery_requests(cells=("recover:over-degrade-only/*/*",)), 60, each)
    assert shallow[1] >= 40 and 5 * shallow[0] >= 2 * shallow[1], shallow  # 40% at least (half are drawn there)


def _parents(msgs: list[Msg]) -> set[str | None]:
    return {m.get("condenseId") for m in msgs if m.get("isSummary")} | {
        m.get("truncationId") for m in msgs if m.get("isTruncationMarker")}


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_a_cheap_tail_grows_when_cut_to_the_floor(encoding: str) -> None:
    # What cheap_tail_texts promises: a cut to the 200-character floor, notice included (the
    # reference's wording; any notice of about this length will do), counts more tokens than the
    # whole text, so only a target that weighs the notice skips it (§4.5).
    counter = get_counter(encoding)
    grown: list[int] = []

    def each(text: str) -> None:
        cut = text[:200] + notice_text(len(text) - 200)
        grown.append(counter.count_text(cut) - counter.count_text(text))

    _generate(cheap_tail_texts(), 100, each)
    assert min(grown) > 0, min(grown)
    runs: list[float] = []
    _generate(padding_runs(300, 1500), 50, lambda run: runs.append(counter.count_text(run) / len(run)))
    assert max(runs) < 0.05, max(runs)  # a token per 20 characters or fewer


def test_hidden_results_are_longer_than_every_visible_result() -> None:
    # A recovery that takes the hidden result for visible cuts it first, largest first or oldest first.
    pairs = [0]

    def each(request: dict[str, Any]) -> None:
        msgs = request["messages"]
        hidden = visibility(msgs)
        lengths: dict[bool, list[int]] = {True: [], False: []}
        for m, h in zip(msgs, hidden, strict=True):
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_result":
                    inner = b.get("content")
                    texts_ = [inner] if isinstance(inner, str) else [
                        i["text"] for i in inner or [] if i.get("type") == "text"]
                    lengths[h is not None] += [len(t) for t in texts_]
        big = [n for n in lengths[True] if n >= 1500]
        if big and lengths[False]:
            pairs[0] += 1
            assert max(big) > max(lengths[False])

    _generate(recovery_requests(cells=("recover:over-degrade-only/condensed/string",
                                       "recover:over-degrade-only/truncated/image")), 60, each)
    assert pairs[0] > 20, pairs[0]


def test_a_third_of_the_stuck_budgets_are_just_out_of_the_references_reach() -> None:
    # Where a recovery that takes one thing more than the contract lets it succeeds: within 40 tokens
    # under what the reference's own recovery gets down to (its error says how far, §4.8).
    near = [0, 0]

    def each(request: dict[str, Any]) -> None:
        got = partition.reference_recover(request["messages"], request["contextWindow"], request["maxTokens"],
                                         request["systemPrompt"])
        reached = re.search(r" leaves (\d+) tokens, over the (\d+) allowed", got.error or "")
        if reached is None:
            return
        near[1] += 1
        near[0] += int(reached.group(1)) - int(reached.group(2)) <= 40

    _generate(recovery_requests(cells=("recover:over-stuck/*/*",)), 60, each)
    assert near[1] >= 40 and 4 * near[0] >= near[1], near
