"""Shrink candidates are chosen by truncation tags only, so results a summary already hides get cut.

``findShrinkableToolResults`` skips ``truncationParent`` messages and markers but not condensed ones
(domain §3.7 reviewer finding 2, §7 B8), and counts with the same predicate: it "frees" tokens the API
never saw and reports success over budget.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, recount
from tests.quality.zoo._degrade import shrink_recover

CLAUSE = "contract §4.5"

describe = describe_as("bug_shrink_ignores_condense", ["recover"])


def _by_truncation_tags(messages: list[dict[str, Any]]) -> list[bool]:
    return [not m.get("truncationParent") and not m.get("isTruncationMarker") for m in messages]


def _count(messages: list[dict[str, Any]], system: str) -> int:
    shown = [m for m, keep in zip(messages, _by_truncation_tags(messages), strict=True) if keep]
    return recount([dict(m, isSummary=False) if m.get("isSummary") else m for m in shown], system)


def recover(params: dict[str, Any]) -> dict[str, Any]:
    return shrink_recover(params, candidates=_by_truncation_tags, count=_count)
