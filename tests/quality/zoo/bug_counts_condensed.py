"""The recount includes condensed messages (only truncation tags hide), so recovery truncates histories that fit.

``newContextTokensAfterTruncation`` sums messages "without truncationParent and not markers"
(domain §3.2): a summary's condensed messages are counted although the API never sees them, and a
request within budget is cut anyway (contract §4.2: within budget, no change).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, recover_with_allowed

CLAUSE = "contract §4.2"

describe = describe_as("bug_counts_condensed", ["recover"])


def _field_count(messages: list[dict[str, Any]], system: str) -> int:
    shown = [m for m in messages if not m.get("truncationParent") and not m.get("isTruncationMarker")]
    return recount([dict(m, isSummary=False) if m.get("isSummary") else m for m in shown], system)


def recover(params: dict[str, Any]) -> dict[str, Any]:
    system = params.get("systemPrompt", "")
    allowed = allowed_for(params)
    overcount = max(0, _field_count(params["messages"], system) - recount(params["messages"], system))
    return recover_with_allowed(params, allowed - overcount)
