"""When the reserve leaves no room (allowed <= 0), recovery returns the history unchanged as a success.

A small window with a large ``maxTokens`` makes ``allowedTokens`` zero or negative (domain §3.1,
§7 C10); an early ``return`` meant for "nothing to do" reports success and the agent loops.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, reference_recover

CLAUSE = "contract §4.1"

describe = describe_as("bug_allowed_nonpositive_noop", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    if allowed_for(params) <= 0:  # the bug: treated like "within budget"
        prev = recount(params["messages"], params.get("systemPrompt", ""))
        return {"messages": params["messages"], "error": None, "messagesRemoved": 0,
                "prevContextTokens": prev, "newContextTokens": prev, "truncationId": None}
    return reference_recover(params)
