"""A JSON-level visibility predicate with switches, for the visibility bugs of the zoo (contract §2)."""

from __future__ import annotations

from typing import Any

from ctxmodel import codec

Msg = dict[str, Any]


def effective_json(
    messages: list[Msg],
    *,
    condense: bool = True,
    require_parent: bool = True,
    last_summary: bool = True,
    keep_markers: bool = True,
    summary_slice: bool = True,
) -> list[Msg]:
    """Contract §2 with each rule behind a switch; all switches on is the contract's predicate."""
    msgs = codec.copy_json(messages)
    summaries = {m.get("condenseId") for m in msgs if m.get("isSummary") and isinstance(m.get("condenseId"), str)}
    markers = {
        m.get("truncationId") for m in msgs if m.get("isTruncationMarker") and isinstance(m.get("truncationId"), str)
    }
    starts = [i for i, m in enumerate(msgs) if m.get("isSummary")]
    start = (starts[-1] if last_summary else starts[0]) if starts and summary_slice else -1
    out: list[Msg] = []
    for i, m in enumerate(msgs):
        if start >= 0 and i < start:
            continue
        if i != start:
            cp, tp = m.get("condenseParent"), m.get("truncationParent")
            if condense and cp is not None and (cp in summaries or not require_parent):
                continue
            if tp is not None and (tp in markers or not require_parent):
                continue
            if not keep_markers and m.get("isTruncationMarker"):
                continue
        out.append(m)
    return out
