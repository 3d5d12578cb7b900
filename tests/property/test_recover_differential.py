"""The linear cut selection of ``ctxmodel.recover`` against the quadratic one it replaced.

``old_plan_cut`` below is the cut selection as it was at commit 4e49e1a, copied verbatim with its
pairing helpers (only renamed): for every candidate it rebuilds the window after the cut, recounts
its issues and builds the cut, which made a 16,000-message recovery 6x one count. Recovery with it
patched in must give exactly what the package gives: same messages, same figures, same degraded
texts, same errors, on ``ctxmodel.strategies.recovery_requests()`` and on the local strategy of
``tests/property/test_recover_properties.py`` (old markers, summaries, orphans, interrupted calls) at
budgets anywhere from nothing to all, with the fake and the real counter.
"""

from __future__ import annotations

import importlib
from collections import Counter as Multiset
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodel.codec import load
from ctxmodel.model import Message, Opaque, Text, ToolResult
from ctxmodel.recover import CounterLike, _Cut, _Fudge, marker_text, recover
from ctxmodel.strategies import recovery_requests
from ctxmodel.tokens import get_counter
from ctxmodel.visibility import effective, visible_mask
from tests.property.test_recover_properties import histories
from tests.unit.test_recover import CharCounter

#: The module, not ``ctxmodel.recover`` (the package binds that name to the function); Any, as the
#: tests swap its private functions.
rec: Any = importlib.import_module("ctxmodel.recover")

Issue = tuple[str, str]


# -- the old cut selection, verbatim (commit 4e49e1a) ---------------------------------------------


def old_tool_use_ids(message: Message | None) -> list[str]:
    if message is None or message.role != "assistant":
        return []
    return [b.id for b in message.tool_uses]


def old_leading_result_ids(message: Message) -> set[str]:
    ids: set[str] = set()
    for block in message.blocks:
        if not isinstance(block, ToolResult):
            break
        ids.add(block.tool_use_id)
    return ids


def old_issues(prev: Message | None, message: Message, nxt: Message | None) -> list[Issue]:
    """The pairing violations owned by ``message`` given its neighbours in a request.

    ``missing``: a ``tool_use`` of a non-last assistant message whose id does not lead the next
    user message (§3 rule 1); ``unexpected``: a ``tool_result`` whose id is not a ``tool_use`` of the
    assistant message right before (§3 rule 4); ``server-pending``: a non-result block after an
    unresolved server tool call. Keyed by rule and tool id, as §4 rule 4 compares. Only adjacency
    changes when messages are hidden, so these are the only violations a cut can create.
    """
    out: list[Issue] = []
    if message.role == "assistant" and nxt is not None:
        uses = message.tool_uses
        if uses:
            leading = old_leading_result_ids(nxt) if nxt.role == "user" else set()
            out.extend(("missing", u.id) for u in uses if u.id not in leading)
        pending = old_pending_server_ids(message)
        if pending and nxt.role == "user":
            # An unresolved server tool call lets only results follow (domain §5.1; §7 A16).
            others = sum(1 for b in nxt.blocks if not isinstance(b, ToolResult))
            out.extend(("server-pending", i) for i in pending for _ in range(others))
    results = message.tool_results
    if results:
        allowed = set(old_tool_use_ids(prev)) if message.role == "user" else set()
        out.extend(("unexpected", r.tool_use_id) for r in results if r.tool_use_id not in allowed)
    return out


def old_pending_server_ids(message: Message) -> list[str]:
    uses: list[str] = []
    resolved: set[str] = set()
    for block in message.blocks:
        if isinstance(block, Opaque):
            key = "id" if block.type == "server_tool_use" else "tool_use_id"
            value = block.fields.get(key)
            if not isinstance(value, str):
                continue
            if block.type == "server_tool_use":
                uses.append(value)
            elif block.type.endswith("_tool_result") and block.type != "tool_result":
                resolved.add(value)
    return sorted(set(uses) - resolved)


def old_holds_results_of(assistant: Message, user: Message) -> bool:
    """Whether ``user`` holds a result of one of ``assistant``'s calls: a pair never to split."""
    if assistant.role != "assistant" or user.role != "user":
        return False
    ids = set(old_tool_use_ids(assistant))
    return bool(ids) and any(r.tool_use_id in ids for r in user.tool_results)


def old_plan_cut(
    history: Sequence[Message],
    visible: list[int],
    raws: list[int],
    counter: CounterLike,
    fudge: Any,
    raw_budget: int,
    raw_total: int,
) -> _Cut | None:
    """The fewest oldest visible messages to hide, or else the cut that lowers the count most.

    Candidates hide the first ``k`` taggable visible messages (not the first visible one, not
    markers); the first kept is the next visible message, so the last visible message is never
    tagged. A cut is refused when it splits a tool pair (so the assistant whose results the last
    visible message holds is never tagged) or when the request it leaves would hold a pairing
    violation (rule, tool id) more often than the input's did (contract §4 rule 4). Token sums come
    from ``raws`` prefix sums: no recount per candidate.
    """
    n = len(visible)
    if n < 3:
        return None
    msgs = [history[i] for i in visible]
    is_marker = [m.is_truncation_marker for m in msgs]
    pair = [j + 1 < n and old_holds_results_of(msgs[j], msgs[j + 1]) for j in range(n)]

    # Old issues per owner (visible order), and per key the owners' positions, for prefix counts.
    positions: dict[Issue, list[int]] = {}
    for j in range(n):
        for issue in old_issues(msgs[j - 1] if j else None, msgs[j], msgs[j + 1] if j + 1 < n else None):
            positions.setdefault(issue, []).append(j)  # appended in increasing j: already sorted

    def owned_up_to(issue: Issue, last: int) -> int:
        pos = positions.get(issue)
        if not pos:
            return 0
        lo, hi = 0, len(pos)
        while lo < hi:
            mid = (lo + hi) // 2
            if pos[mid] <= last:
                lo = mid + 1
            else:
                hi = mid
        return lo

    marker_positions = [j for j in range(1, n) if is_marker[j]]
    # An old marker in the hidden span stays visible: a pair joining it to a hidden neighbour splits.
    straddles = {
        j: (pair[j - 1] and j > 1 and not is_marker[j - 1]) or (j + 1 < n and pair[j] and not is_marker[j + 1])
        for j in marker_positions
    }
    marker_raw: dict[int, int] = {}

    if pair[0] and not is_marker[1]:
        return None  # every cut hides msgs[1], which holds the results of the never-hidden first message
    best: tuple[int, int, _Cut] | None = None  # (count, k, cut)
    current = fudge.total(raw_total)
    hidden_raw = 0
    k = 0
    for p in range(1, n - 1):  # p: visible position of the k-th hidden message
        if is_marker[p]:
            continue
        k += 1
        hidden_raw += raws[p]
        if pair[p]:
            continue  # would separate msgs[p] (hidden) from its results msgs[p + 1] (kept)
        span_markers = [j for j in marker_positions if j < p]
        if any(straddles[j] for j in span_markers):
            continue  # a pair would straddle an old marker that stays visible
        if k not in marker_raw:
            marker_raw[k] = counter.raw_block(Text(marker_text(k)))
        raw_after = raw_total - hidden_raw + marker_raw[k]
        count_after = fudge.total(raw_after)
        if best is not None and count_after >= best[0] and raw_after > raw_budget:
            continue
        # Pairing check: the request after is [msgs[0], *span markers, NEW, msgs[p + 1], ...].
        new_marker = Message("user", marker_text(k))
        window: list[Message] = [msgs[0], *(msgs[j] for j in span_markers), new_marker, msgs[p + 1]]
        tail = msgs[p + 2] if p + 2 < n else None
        local: Multiset[Issue] = Multiset()
        for w, message in enumerate(window):
            prev = window[w - 1] if w else None
            nxt = window[w + 1] if w + 1 < len(window) else tail
            local.update(old_issues(prev, message, nxt))
        if any(count > owned_up_to(issue, p + 1) for issue, count in local.items()):
            continue
        cut = _Cut(tuple(visible[j] for j in range(1, p + 1) if not is_marker[j]), visible[p + 1], raw_after)
        if raw_after <= raw_budget:
            return cut  # the fewest messages that fit
        if best is None or count_after < best[0]:
            best = (count_after, k, cut)
    if best is None or best[0] >= current:
        return None
    return best[2]


# -- the differential ------------------------------------------------------------------------------


def _ids() -> Any:
    n = iter(range(1000))
    return lambda: f"trunc-{next(n)}"


def _both(messages: Any, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    history = load(messages)
    new = recover(history, new_id=_ids(), **kw).to_json()
    linear = rec._plan_cut
    rec._plan_cut = old_plan_cut
    try:
        old = recover(history, new_id=_ids(), **kw).to_json()
    finally:
        rec._plan_cut = linear
    return new, old


@settings(max_examples=300)
@given(request=recovery_requests(), counter=st.sampled_from(["zoo", "fake"]))
def test_recover_equals_the_old_cut_selection_on_recovery_requests(request: dict[str, Any], counter: str) -> None:
    new, old = _both(
        request["messages"],
        context_window=request["contextWindow"],
        max_tokens=request["maxTokens"],
        system_prompt=request["systemPrompt"],
        counter=get_counter("zoo") if counter == "zoo" else CharCounter(),
    )
    assert new == old


@settings(max_examples=300)
@given(value=histories(), share=st.integers(0, 110), counter=st.sampled_from(["zoo", "fake"]))
def test_plan_cut_equals_the_old_one_at_every_budget(value: list[dict[str, Any]], share: int, counter: str) -> None:
    """The cut itself, on histories with old markers, summaries and orphans, at any raw budget."""
    counts = get_counter("zoo") if counter == "zoo" else CharCounter()
    history = load(value)
    mask = visible_mask(history)
    visible = [i for i, keep in enumerate(mask) if keep]
    raws = [sum(counts.raw_block(b) for b in history[i].blocks) for i in visible]
    raw_total = sum(raws)
    fudge = _Fudge.of(counts)
    budget = raw_total * share // 100 - 1
    args = (history, visible, raws, counts, fudge, budget, raw_total)
    assert rec._plan_cut(*args) == old_plan_cut(*args)


def _long_history(kinds: set[str]) -> list[dict[str, Any]]:
    """150 tool round trips with old markers of the ``kinds`` asked for sprinkled in."""
    value: list[dict[str, Any]] = [{"role": "user", "content": "task"}]

    def call(tid: str, **meta: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "r", "input": {}}], **meta}

    def result(tid: str, **meta: Any) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "r" * 90}], **meta}

    for t in range(150):
        if "holds-results" in kinds and t % 50 == 40:  # an old marker holding the results of a visible call
            value += [call(f"t{t}"), result(f"t{t}", isTruncationMarker=True, truncationId=f"r{t}")]
        elif "calls" in kinds and t % 50 == 45:  # an old (assistant) marker whose call's results follow
            value += [call(f"t{t}", isTruncationMarker=True, truncationId=f"c{t}"), result(f"t{t}")]
        elif "server" in kinds and t % 11 == 9:  # an unresolved server tool call, then text
            server = {"type": "server_tool_use", "id": f"s{t}", "name": "web_search", "input": {}}
            value += [{"role": "assistant", "content": [server]}, {"role": "user", "content": f"go on {t}"}]
        else:
            value += [call(f"t{t}"), result(f"t{t}")]
        if "plain" in kinds and t % 7 == 3:
            value.append(
                {"role": "user", "content": marker_text(2), "isTruncationMarker": True, "truncationId": f"m{t}"}
            )
        if "assistant" in kinds and t % 31 == 5:
            value.append(
                {"role": "assistant", "content": f"note {t}", "isTruncationMarker": True, "truncationId": f"a{t}"}
            )
        if "orphans" in kinds and t % 23 == 11:
            orphan = {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}
            value.append({"role": "user", "content": [orphan]})
        if "orphan-marker" in kinds and t % 37 == 20:  # an old marker holding an orphan result
            orphan = {"type": "tool_result", "tool_use_id": "toolu_lost", "content": "x"}
            value.append({"role": "user", "content": [orphan], "isTruncationMarker": True, "truncationId": f"o{t}"})
        if "server-marker" in kinds and t % 41 == 30:
            # An old marker with an unresolved server call, then only an orphan result: hiding the
            # orphan puts the new marker's text after the server call (a new server-pending issue).
            server = {"type": "server_tool_use", "id": f"s{t}", "name": "web_search", "input": {}}
            orphan = {"type": "tool_result", "tool_use_id": f"gone{t}", "content": "x" * 40}
            value += [
                {"role": "assistant", "content": [server], "isTruncationMarker": True, "truncationId": f"w{t}"},
                {"role": "user", "content": [orphan]},
            ]
    return value


_KINDS = ["plain", "assistant", "holds-results", "calls", "server", "orphans", "orphan-marker", "server-marker"]


@pytest.mark.parametrize(
    "kinds",
    [{kind} for kind in _KINDS] + [set(_KINDS) - {"holds-results", "calls"}, set(_KINDS)],
    ids=[*_KINDS, "all-but-straddles", "all"],
)
def test_a_long_history_with_many_old_markers_cuts_as_before(kinds: set[str]) -> None:
    """Many visible old markers in the span: plain ones, assistant ones, one holding the results of
    a visible call (its ``tool_use`` may not be hidden: the straddle rule), one calling a tool whose
    results follow, unresolved server tool calls (one in a marker, followed by an orphan), orphan
    results (one in a marker); long enough that the old selection's rebuild is visible."""
    counter = CharCounter()
    history = load(_long_history(kinds))
    fudge = _Fudge.of(counter)
    for start in (0, 1, 2, 5, 9):  # the history from several first messages (the first is never hidden)
        sub = history[start:] if start == 0 or history[start].role == "user" else (history[0], *history[start:])
        raws = [sum(counter.raw_block(b) for b in m.blocks) for m in sub]
        for share in range(0, 101, 2):
            budget = sum(raws) * share // 100
            args = (sub, list(range(len(sub))), raws, counter, fudge, budget, sum(raws))
            assert rec._plan_cut(*args) == old_plan_cut(*args), (start, share)


@pytest.mark.parametrize("counter", ["fake", "zoo"])
def test_the_cut_counts_what_the_counter_counts_of_its_result(counter: str) -> None:
    """``raw_after`` (the marker counted with its own number ``k``) is the counter's raw count of the
    history the cut leaves, at every budget, across the 9/10 and 99/100 hidden-message boundaries
    where the marker's text changes length."""
    counts = get_counter("zoo") if counter == "zoo" else CharCounter()
    value: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for t in range(70):
        value.append({"role": "user", "content": f"note {t} " + "n" * (t % 13)})
        value.append({"role": "assistant", "content": f"ok {t} " + "o" * 12})
    history = load(value)
    visible = list(range(len(history)))
    raws = [sum(counts.raw_block(b) for b in m.blocks) for m in history]
    fudge = _Fudge.of(counts)
    seen: set[int] = set()
    for budget in range(sum(raws) - 1, 0, -1):
        cut = rec._plan_cut(history, visible, raws, counts, fudge, budget, sum(raws))
        if cut is None:
            continue
        seen.add(len(cut.hidden))
        after = rec._apply_cut(history, cut, "t")
        assert cut.raw_after == sum(counts.raw_block(b) for m in effective(after) for b in m.blocks), budget
    assert {9, 10, 99, 100} <= seen
