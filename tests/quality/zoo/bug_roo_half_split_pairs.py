"""Half-even truncation that assumes strict alternation: the cut can hide a tool_use and keep its result.

``messagesToRemove`` rounded down to even keeps user/assistant pairs together only when roles
alternate (domain §3.3); with consecutive same-role messages in storage the first kept message can
hold results of a hidden call, and Branch B then sends the orphan (400 "unexpected tool_use_id").
Budget and progress are handled correctly here: only the cut is wrong.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, controlled_error, describe_as, recount, roo_truncate, visible_flags

CLAUSE = "contract §4.4"

describe = describe_as("bug_roo_half_split_pairs", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    messages = params["messages"]
    system = params.get("systemPrompt", "")
    allowed = allowed_for(params)
    if allowed <= 0:
        return controlled_error(params, f"allowed = {allowed}")
    prev = recount(messages, system)
    if prev <= allowed:
        return {"messages": messages, "error": None, "messagesRemoved": 0, "prevContextTokens": prev,
                "newContextTokens": prev, "truncationId": None}
    out, removed_total, tid = messages, 0, None
    for frac in (0.5, 0.75, 1.0):  # one cut per call; a larger fraction when half is not enough
        out, removed_total, tid = roo_truncate(messages, frac, visible_flags(messages))
        if removed_total and recount(out, system) <= allowed:
            break
    new = recount(out, system)
    if removed_total == 0 or new > allowed:
        return controlled_error(params, f"truncation leaves {new} tokens over the {allowed} allowed")
    return {"messages": out, "error": None, "messagesRemoved": removed_total, "prevContextTokens": prev,
            "newContextTokens": new, "truncationId": tid}
