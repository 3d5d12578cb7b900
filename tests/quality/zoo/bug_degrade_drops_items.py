"""Degrading a tool result with list content replaces the whole list by the cut text, dropping its images.

``compressOldToolResults`` turns a result's entire ``content`` into one placeholder string (domain §3.8);
degradation may only cut textual text, never images or other items (contract §4.5).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover

CLAUSE = "contract §4.5"

describe = describe_as("bug_degrade_drops_items", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    for entry in out.get("degraded", []):
        parts = entry["path"].split(".")  # messages.N.content.M.content.K for a text item
        if len(parts) != 6:
            continue
        n, m = int(parts[1]), int(parts[3])
        message = out["messages"][n]
        block = message["content"][m]
        text = "\n".join(i["text"] for i in block["content"] if i.get("type") == "text")
        content = list(message["content"])
        content[m] = dict(block, content=text)
        out["messages"][n] = dict(message, content=content)
    return out
