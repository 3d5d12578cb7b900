"""Destructive truncation: hidden messages are deleted from the stored history instead of tagged.

Before Roo-Code PR #9665 truncation sliced the array (domain §3.6); rewind can no longer restore
anything, and the marker hides nothing (contract §4.3: never delete a message).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover

CLAUSE = "contract §4.3"

describe = describe_as("bug_deletes_hidden", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    tid = out.get("truncationId")
    if out.get("error") is None and tid:
        out["messages"] = [m for m in out["messages"] if m.get("truncationParent") != tid]
    return out
