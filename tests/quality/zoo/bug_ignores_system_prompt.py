"""The budget check counts the messages only, not the system prompt sent with them.

Before Roo-Code #3582 the new-size estimate left the system prompt out (domain §3.6); with a long
system prompt a "fitting" request is over budget (contract §4: count = system prompt + history).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, recount, reference_recover

CLAUSE = "contract §4.7"

describe = describe_as("bug_ignores_system_prompt", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(dict(params, systemPrompt=""))  # the bug: the prompt is not counted
    system = params.get("systemPrompt", "")
    out["prevContextTokens"] = recount(params["messages"], system)
    out["newContextTokens"] = recount(out["messages"], system)
    if out.get("error"):
        out["newContextTokens"] = out["prevContextTokens"]
    return out
