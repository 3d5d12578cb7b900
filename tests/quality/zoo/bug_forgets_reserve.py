"""The budget forgets the output reserve: allowed = 0.9 * contextWindow, so "fits" leaves no room to answer.

``allowedTokens = contextWindow * (1 - 0.1) - reservedTokens`` (domain §3.1) with the reserve term
lost in a refactor: the request fits the window but not the window less ``maxTokens``, and the
provider rejects it — success reported while over budget.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, recover_with_allowed

CLAUSE = "contract §4.7"

describe = describe_as("bug_forgets_reserve", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    return recover_with_allowed(params, (9 * int(params["contextWindow"])) // 10)
