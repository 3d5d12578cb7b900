"""Zero-progress truncation reported as success: even-rounding removes 0 messages, the call returns no error.

With one task, one tool call and one oversized result, ``floor((visible - 1) * 0.5)`` is 1, rounded
down to even 0; ``truncateConversation`` returns the same messages with a fresh id and ``manageContext``
passes that on as success, so every retry is over budget again (domain §3.3, §3.7; Zoo-Code #1254).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, reference_recover, roo_truncate, visible_flags

CLAUSE = "contract §4.6"

describe = describe_as("bug_zero_progress_success", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    messages = params["messages"]
    prev = recount(messages, params.get("systemPrompt", ""))
    if allowed_for(params) > 0 and prev > allowed_for(params):
        same, removed, tid = roo_truncate(messages, 0.5, visible_flags(messages))
        if removed == 0:  # the bug: "nothing to remove" is passed on as a successful truncation
            return {"messages": same, "error": None, "messagesRemoved": 0, "prevContextTokens": prev,
                    "newContextTokens": prev, "truncationId": tid}
    return reference_recover(params)
