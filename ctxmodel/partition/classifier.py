"""Any op's cells: which ops have a partition, the classifier over all of them, and the cells a
declared input space leaves out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxmodel.partition.effective import EFFECTIVE_CELLS, POSITIONS, TAGS, effective_cells
from ctxmodel.partition.normalize import NORMALIZE_CELLS, normalize_cells
from ctxmodel.partition.recover import RECOVER_CELLS, recover_cell
from ctxmodel.partition.trim import TRIM_CELLS, trim_cells

__all__ = ["CELLS", "cells_of", "classify", "excluded_by"]

#: Every possible cell of each op that has a partition.
CELLS: dict[str, tuple[str, ...]] = {
    "recover": RECOVER_CELLS,
    "effective": EFFECTIVE_CELLS,
    "normalize": NORMALIZE_CELLS,
    "trim": TRIM_CELLS,
}

_NO_DANGLING = "inputs=agent-stored: a rewind strips every tag naming a summary or marker it removed"
_NO_STALE = "inputs=agent-stored: a summary tags only messages stored before it"
_OWN_KIND = ("inputs=agent-stored: a condenseParent names a summary and a truncationParent a marker, "
             "never the other (a tag naming neither is stripped like a dangling one)")

_UNTAGGED = "inputs=untagged: no message carries a summary, marker or tag that hides another"


def excluded_by(policies: Mapping[str, str]) -> dict[str, str]:
    """The cells a declared input space leaves out (contract §7, policy ``inputs``), with the reason:
    a property is not asked to reach what the target can never be given."""
    if policies.get("inputs") == "untagged":
        out = {"effective:*/*/*": _UNTAGGED}
        for history in ("condensed", "truncated", "dangling", "legacy"):
            out[f"recover:*/{history}"] = out[f"recover:*/{history}/*"] = _UNTAGGED
        return out
    if policies.get("inputs") != "agent-stored":
        return {}
    out = {f"effective:{tag}/dangling/{where}": _NO_DANGLING for tag in TAGS for where in POSITIONS}
    out["effective:condenseParent/earlier-summary/after"] = _NO_STALE
    out["effective:condenseParent/last-summary/after"] = _NO_STALE
    out["effective:condenseParent/marker/*"] = _OWN_KIND
    out["effective:truncationParent/earlier-summary/*"] = _OWN_KIND
    out["effective:truncationParent/last-summary/*"] = _OWN_KIND
    out["recover:*/dangling"] = _NO_DANGLING
    out["recover:*/dangling/*"] = _NO_DANGLING
    return out


def classify(op: str, params: Mapping[str, Any]) -> set[str]:
    """The cells of one input of ``op`` (empty for an op without a partition). May raise on an input
    of another shape than the contract's; :func:`cells_of` does not."""
    if op == "recover":
        return {recover_cell(params)}
    if op == "effective":
        return effective_cells(params["messages"])
    if op == "normalize":
        return normalize_cells(params["messages"])
    if op == "trim":
        return trim_cells(params)
    return set()


def cells_of(op: str, params: Mapping[str, Any]) -> set[str]:
    """:func:`classify`, with ``OP:unclassified`` for an input it cannot read (a hand-written fixture)."""
    try:
        return classify(op, params)
    except Exception:
        return {f"{op}:unclassified"}
