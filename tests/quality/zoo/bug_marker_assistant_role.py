"""The truncation marker is written as an assistant message (the pre-December-2025 layout).

Roo-Code PR #9844 made markers user messages at the real boundary (domain §3.6); an assistant marker
between an assistant ``tool_use`` and its results breaks the pairing the API checks.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover

CLAUSE = "contract §4.3"

describe = describe_as("bug_marker_assistant_role", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    out["messages"] = [
        dict(m, role="assistant") if m.get("isTruncationMarker") and m.get("truncationId") == out.get("truncationId")
        else m
        for m in out["messages"]
    ]
    return out
