"""The contract's yardsticks, restated on JSON and independent of the reference (contract §2, §4).

A judge that decided with ``ctxmodel.visibility`` or ``ctxmodel.recover`` would be blind to the
reference's own bugs (mutation testing showed it), so what the properties measure with lives here,
written from the contract's words: the budget formula, the controlled-error prefix, the visibility
predicate and the pairing-violation keys. The one property that asks the reference by design
(``recover.gives-up-where-possible``) says so where it does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ctxmodel.properties.judge import pairing_violations

__all__ = [
    "DEFAULT_RESERVE",
    "FAILED_PREFIX",
    "allowed_tokens",
    "effective",
    "pairing_violations",
    "visible_indices",
    "visible_mask",
]

Msg = Mapping[str, Any]

#: Every controlled error's text starts with this (contract §4.8).
FAILED_PREFIX = "Context window recovery failed"
#: The reserve when ``maxTokens`` is zero or negative (contract §4, budget).
DEFAULT_RESERVE = 8192


def allowed_tokens(context_window: int, max_tokens: int) -> int:
    """``floor(0.9 * contextWindow) - reserve``, the reserve being ``maxTokens`` when positive."""
    reserve = max_tokens if max_tokens > 0 else DEFAULT_RESERVE
    return math.floor(0.9 * context_window) - reserve


def visible_mask(history: Sequence[Msg]) -> list[bool]:
    """If a summary exists, everything before the last one is hidden and the last one is visible;
    after it, a message is hidden when its ``condenseParent`` names an existing summary or its
    ``truncationParent`` an existing marker — existing anywhere in the input, hidden or not."""
    summaries = [i for i, m in enumerate(history) if m.get("isSummary") is True]
    condense_ids = {m.get("condenseId") for m in history if m.get("isSummary") is True}
    marker_ids = {m.get("truncationId") for m in history if m.get("isTruncationMarker") is True}
    condense_ids.discard(None)
    marker_ids.discard(None)
    last = summaries[-1] if summaries else -1
    out: list[bool] = []
    for i, m in enumerate(history):
        if i < last:
            out.append(False)
        elif i == last:
            out.append(True)
        else:
            parent, cut = m.get("condenseParent"), m.get("truncationParent")
            condensed = isinstance(parent, str) and parent in condense_ids
            truncated = isinstance(cut, str) and cut in marker_ids
            out.append(not (condensed or truncated))
    return out


def visible_indices(history: Sequence[Msg]) -> list[int]:
    return [i for i, keep in enumerate(visible_mask(history)) if keep]


def effective(history: Sequence[Msg]) -> list[Any]:
    """The visible messages, in order, the objects themselves (contract §2: it edits no content)."""
    return [history[i] for i in visible_indices(history)]
