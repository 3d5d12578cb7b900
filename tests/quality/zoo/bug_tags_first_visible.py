"""Truncation tags from visible position 0: the task's first message (the user's request) is hidden too.

An off-by-one on ``visibleIndices.slice(1, n + 1)`` (domain §3.3 step 4): the model loses the task it
is working on.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover, visible_flags

CLAUSE = "contract §4.3"

describe = describe_as("bug_tags_first_visible", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    tid = out.get("truncationId")
    if out.get("error") is None and tid:
        messages = out["messages"]
        flags = visible_flags(params["messages"])
        if True in flags:
            first = flags.index(True)
            messages[first] = dict(messages[first], truncationParent=tid)
            out["messagesRemoved"] += 1
    return out
