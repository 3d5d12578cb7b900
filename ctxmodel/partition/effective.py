"""The ``effective`` cells (contract §2): ``effective:TAG/PARENT/POSITION``, one per parent tag of a
message, and the classifier that finds every cell a history reaches.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodel.contract_data import existing_parents, last_summary_index
from ctxmodel.json_types import JsonMessageView as Msg

__all__ = ["EFFECTIVE_CELLS", "PARENTS", "POSITIONS", "TAGS", "effective_cells"]

TAGS: tuple[str, ...] = ("condenseParent", "truncationParent")
PARENTS: tuple[str, ...] = ("earlier-summary", "last-summary", "marker", "dangling")
POSITIONS: tuple[str, ...] = ("before", "after")

EFFECTIVE_CELLS: tuple[str, ...] = tuple(
    f"effective:{t}/{p}/{q}" for t in TAGS for p in PARENTS for q in POSITIONS
)


def effective_cells(messages: Sequence[Msg]) -> set[str]:
    """The cell of every parent tag in the history (the last summary's own tags aside)."""
    summary_ids, marker_ids = existing_parents(messages)
    last = last_summary_index(messages)
    last_id = messages[last].get("condenseId") if last >= 0 else None
    out: set[str] = set()
    for i, m in enumerate(messages):
        if i == last:
            continue
        position = "before" if i < last else "after"
        for tag in TAGS:
            parent = m.get(tag)
            if parent is None:
                continue
            if not isinstance(parent, str):
                kind = "dangling"  # a parent names a summary or marker by a string id (contract §1)
            elif last >= 0 and parent == last_id:
                kind = "last-summary"
            elif parent in summary_ids:
                kind = "earlier-summary"
            elif parent in marker_ids:
                kind = "marker"
            else:
                kind = "dangling"
            out.add(f"effective:{tag}/{kind}/{position}")
    return out
