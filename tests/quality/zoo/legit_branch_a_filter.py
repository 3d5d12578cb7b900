"""The effective history also drops tool_result blocks whose tool_use is not in it, as Branch A does, in both branches.

``getEffectiveApiHistory`` filters orphans after a summary, cloning the message and removing one it
empties (domain §2.1 Branch A steps 2-3); contract §2 allows a target to do so.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, is_result, reference_effective, use_ids

CLAUSE = "contract §2"

describe = describe_as("legit_branch_a_filter", ["effective"])


def effective(params: dict[str, Any]) -> dict[str, Any]:
    messages = reference_effective(params)["messages"]
    ids = {i for m in messages for i in use_ids(m)}
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, list):
            kept = [b for b in content if not (is_result(b) and b.get("tool_use_id") not in ids)]
            if len(kept) != len(content):
                if kept:
                    out.append(dict(m, content=kept))
                continue
        out.append(m)
    return {"messages": out}
