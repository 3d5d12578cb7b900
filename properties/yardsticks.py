"""The contract's yardsticks, on JSON and independent of the reference (contract §2, §4).

A judge that decided with ``ctxmodel.visibility`` or ``ctxmodel.recover`` would be blind to the
reference's own bugs (mutation testing showed it), so what the properties measure with is gathered
here. The budget formula, the controlled-error prefix and the visibility predicate on JSON are the
contract's data (``ctxmodel.contract_data``): the reference shares the formula and the prefix (the
tests pin their values by hand), but not the predicate (``ctxmodel.visibility`` keeps its own on the
model, and a test holds the two to agree). The pairing violations are counted by the judges' own
reading (``json_reading``), keyed by the contract's violation names. The one
property that asks the reference by design (``recover.gives-up-where-possible``) says so where it
does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxmodel.contract_data import DEFAULT_RESERVE, FAILED_PREFIX, allowed_tokens, visible_mask
from ctxmodel.json_types import JsonMessageView
from ctxmodel.properties.json_reading import pairing_violations

__all__ = [
    "DEFAULT_RESERVE",
    "FAILED_PREFIX",
    "allowed_tokens",
    "effective",
    "pairing_violations",
    "visible_indices",
    "visible_mask",
]


def visible_indices(history: Sequence[JsonMessageView]) -> list[int]:
    return [i for i, keep in enumerate(visible_mask(history)) if keep]


def effective(history: Sequence[JsonMessageView]) -> list[Any]:
    """The visible messages, in order, the objects themselves (contract §2: it edits no content)."""
    return [history[i] for i in visible_indices(history)]
