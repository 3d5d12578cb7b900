"""Roo's reserve ``maxTokens || 8192``: maxTokens = -1 (the "unlimited" setting) reserves -1 tokens.

JavaScript's ``||`` only falls back on 0 (domain §3.1); Zoo's ``maxTokens > 0`` guard is the fix. The
budget grows past the window's usable part, so over-budget requests are left alone or "fit".
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, recover_with_allowed

CLAUSE = "contract §4.7"

describe = describe_as("bug_reserve_or_minus_one", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    max_tokens = int(params.get("maxTokens", 0))
    reserve = max_tokens or 8192  # the bug: a negative maxTokens is truthy
    return recover_with_allowed(params, (9 * int(params["contextWindow"])) // 10 - reserve)
