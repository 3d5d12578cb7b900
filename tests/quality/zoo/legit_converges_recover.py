"""Recovery in steps: the first call halves the excess, the retry goes all the way (recoverSuccess=converges).

Roo-Code and Zoo-Code retry a context error up to 3 times (domain §3.5); a target that declares
``converges`` may stay over budget as long as those retries reach it (contract §4.7).
"""

from __future__ import annotations

import json
from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, recover_with_allowed, reference_recover

CLAUSE = "contract §4.7"

describe = describe_as("legit_converges_recover", ["recover"], recoverSuccess="converges")


def recover(params: dict[str, Any]) -> dict[str, Any]:
    allowed = allowed_for(params)
    # One halfway step per recovery: the retry sees either the marker of a halfway cut or the notice of
    # a halfway degradation (a degradation-only step leaves no marker; halving the excess again on
    # each retry then never reaches the budget, contract §4.7).
    messages = params["messages"]
    already = any(m.get("isTruncationMarker") for m in messages) or "[Tool result truncated:" in json.dumps(messages)
    if allowed > 0 and not already:
        prev = recount(params["messages"], params.get("systemPrompt", ""))
        halfway = allowed + max(prev - allowed, 0) // 2
        if halfway > allowed:
            step = recover_with_allowed(params, halfway)
            if step.get("error") is None and step["newContextTokens"] < prev:
                step["allowed"] = allowed
                return step
    return reference_recover(params)
