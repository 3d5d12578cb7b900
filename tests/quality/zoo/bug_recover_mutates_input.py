"""Truncation tags the caller's message objects in place instead of cloning them.

Roo's ``truncateConversation`` shallow-clones what it tags (domain §3.3 step 4); tagging the originals
edits the stored history even when the caller then discards the result (contract §1, domain §7 A11).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover

CLAUSE = "contract §1"

describe = describe_as("bug_recover_mutates_input", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    tid = out.get("truncationId")
    if out.get("error") is None and tid:
        stored = params["messages"]
        tagged = [m for m in out["messages"] if not m.get("isTruncationMarker")]
        for original, result in zip(stored, tagged, strict=False):
            if result.get("truncationParent") == tid:
                original["truncationParent"] = tid  # the bug: the caller's object
    return out
