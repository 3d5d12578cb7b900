"""``effective_histories()``: a few (tag, parent, position) cells of ``effective``, then a drawn
history given the summaries, marker and tagged messages they name.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from hypothesis import strategies as st

from ctxmodel import partition
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.cells.fresh import GUARD
from ctxmodel.strategies.cells.pieces import labelled, marker_message, summary_message
from ctxmodel.strategies.histories import histories
from ctxmodel.strategies.text import chance, pick

__all__ = ["effective_histories"]


# -- effective -------------------------------------------------------------------------------------


def _last_summary(messages: Sequence[Msg]) -> int:
    return max((i for i, m in enumerate(messages) if m.get("isSummary") is True), default=-1)


@st.composite
def _effective(draw: st.DrawFn, cells: tuple[str, ...], base: st.SearchStrategy[list[Msg]]) -> list[Msg]:
    chosen = [draw(pick(cells)).partition(":")[2].split("/") for _ in range(draw(st.integers(3, 8)))]
    draw(GUARD)
    msgs = copy.deepcopy(draw(base))
    parents = {parent for _, parent, _ in chosen}
    need_summary = any(pos == "before" for _, _, pos in chosen) or bool(parents & {"last-summary", "earlier-summary"})
    if need_summary:
        last = _last_summary(msgs)
        if last < 0 or last == len(msgs) - 1 or draw(chance(30)):
            at = draw(st.integers(max(1, last + 1), len(msgs)))
            msgs.insert(at, summary_message("cond-last"))
            last = at
        if last == len(msgs) - 1:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": "go on"}]})
        earlier = [i for i in range(last) if msgs[i].get("isSummary") is True]
        if "earlier-summary" in parents and not earlier:
            msgs.insert(draw(st.integers(0, last)), summary_message("cond-earlier"))
    if "marker" in parents and not any(m.get("isTruncationMarker") is True for m in msgs):
        msgs.insert(draw(st.integers(1, len(msgs))), marker_message("trunc-e", 1))
    last = _last_summary(msgs)
    summary_ids = [m.get("condenseId") for i, m in enumerate(msgs) if m.get("isSummary") is True and i < last]
    last_id = msgs[last].get("condenseId") if last >= 0 else None
    marker_ids = [m.get("truncationId") for m in msgs if m.get("isTruncationMarker") is True]
    for n, (tag, parent, position) in enumerate(chosen):
        last = _last_summary(msgs)
        span = range(0, last) if position == "before" else range(last + 1, len(msgs))
        free = [i for i in span if msgs[i].get(tag) is None and msgs[i].get("isSummary") is not True
                and msgs[i].get("isTruncationMarker") is not True]
        if free:
            i = free[draw(st.integers(0, len(free) - 1))]
        else:
            i = draw(st.integers(span.start, max(span.start, span.stop)))
            role = "assistant" if i > 0 and msgs[i - 1].get("role") == "user" else "user"
            msgs.insert(i, {"role": role, "content": [{"type": "text", "text": f"step {n}"}]})
        name = {"earlier-summary": summary_ids[-1] if summary_ids else None, "last-summary": last_id,
                "marker": marker_ids[0] if marker_ids else None}.get(parent) or f"gone-{n}"
        msgs[i][tag] = name
    last = _last_summary(msgs)
    if last >= 0 and draw(chance(20)):
        # The last summary carrying a tag itself (a later sliding window tagged it, or it names its own
        # id): it stays visible all the same (§2: the hiding rules apply to the messages after it).
        options = [("condenseParent", msgs[last].get("condenseId")),
                   *(("condenseParent", s) for s in summary_ids[-1:]),
                   *(("truncationParent", m) for m in marker_ids[:1])]
        tag, name = options[draw(st.integers(0, len(options) - 1))]
        if isinstance(name, str):
            msgs[last].setdefault(tag, name)
    return msgs


def effective_histories(
    *, cells: Sequence[str] | None = None, history: st.SearchStrategy[list[Msg]] | None = None
) -> st.SearchStrategy[list[Msg]]:
    """Stored histories holding, among the tags ``history`` draws, three to eight chosen ``effective``
    cells: the summaries and marker they name are added where missing, then the tagged messages."""
    chosen = tuple(cells) if cells is not None else partition.EFFECTIVE_CELLS
    unknown = [c for c in chosen if c not in partition.EFFECTIVE_CELLS]
    if unknown or not chosen:
        raise ValueError(
            f"effective_histories: unknown cell(s) {unknown}; expected some of {partition.EFFECTIVE_CELLS}")
    return labelled("effective", _effective(chosen, history if history is not None else histories()))
