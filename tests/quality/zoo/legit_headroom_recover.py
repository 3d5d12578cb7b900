"""Recovery aims at 80% of the budget for headroom, and at the budget itself when that is not reachable.

How much a target hides is its own choice (contract §4 reference paragraph): hiding more than needed
so the next turns fit too is what Zoo-Code's "hide half" does in spirit.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, recover_with_allowed, reference_recover

CLAUSE = "contract §4"

describe = describe_as("legit_headroom_recover", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    allowed = allowed_for(params)
    within = allowed > 0 and recount(params["messages"], params.get("systemPrompt", "")) <= allowed
    if allowed > 0 and not within:  # within budget: no change (contract §4.2), headroom or not
        first = recover_with_allowed(params, (allowed * 4) // 5)
        if first.get("error") is None and first.get("messagesRemoved", 0) + len(first.get("degraded", [])) > 0:
            first["allowed"] = allowed
            return first
    return reference_recover(params)
