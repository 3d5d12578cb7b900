"""What every op's cell strategy builds with: the visibility tags, ids already taken, a tool call, a
summary, a marker, a history stripped of its tags, and the ``event("cell: NAME")`` labels a draw
reports (measured by ``ctxmodel.partition``, not taken from the draw).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from ctxmodel import partition
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.blocks import tool_names
from ctxmodel.strategies.histories import SUMMARY_PREFIX, marker_text
from ctxmodel.strategies.text import pick

__all__ = [
    "TAGS",
    "emit_cells",
    "ids_in",
    "label_cells",
    "labelled",
    "marker_message",
    "summary_message",
    "tool_call",
    "unmarked",
]


_META = frozenset(
    {"isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent", "isTruncationMarker"}
)
TAGS = ("condenseParent", "truncationParent")


def label_cells(op: str, params: dict[str, Any]) -> set[str]:
    """The cells of ``params`` (measured), each reported with ``event()`` inside a test."""
    cells = partition.cells_of(op, params)
    emit_cells(cells)
    return cells


# -- shared pieces ---------------------------------------------------------------------------------


def ids_in(messages: Sequence[Msg]) -> set[str]:
    used: set[str] = set()
    for m in messages:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict):
                for key in ("id", "tool_use_id"):
                    if isinstance(b.get(key), str):
                        used.add(b[key])
    return used


_PATHS = ("src/a.ts", "README.md", "x.py", "tests/test_app.py", "package.json")


def tool_call(draw: st.DrawFn, tool_id: str) -> Msg:
    """A plain tool call with ``tool_id`` (the drawn history holds the odd inputs; these are many)."""
    path = draw(pick(_PATHS))
    return {"type": "tool_use", "id": tool_id, "name": draw(tool_names()), "input": {"path": path}}


def summary_message(cid: str, role: str = "user") -> Msg:
    return {"role": role, "content": [{"type": "text", "text": SUMMARY_PREFIX + "the task so far."}],
            "isSummary": True, "condenseId": cid}


def marker_message(tid: str, hidden: int, role: str = "user") -> Msg:
    return {"role": role, "content": marker_text(hidden), "isTruncationMarker": True, "truncationId": tid}


def unmarked(messages: Sequence[Msg]) -> list[Msg]:
    """A fresh copy with every visibility tag removed (all visible), starting with a user message."""
    out = [{k: copy.deepcopy(v) for k, v in m.items() if k not in _META} for m in messages]
    if not out or out[0].get("role") != "user":
        out.insert(0, {"role": "user", "content": "Please fix the failing test."})
    return out


def emit_cells(cells: set[str]) -> None:
    if currently_in_test_context():
        for cell in sorted(cells):
            event(f"cell: {cell}")


def labelled(op: str, strategy: st.SearchStrategy[list[Msg]]) -> st.SearchStrategy[list[Msg]]:
    def label(messages: list[Msg]) -> list[Msg]:
        label_cells(op, {"messages": messages})
        return messages

    return strategy.map(label)
