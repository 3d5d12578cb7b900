"""To avoid copying megabytes, the recovery result reuses the caller's message objects and patches a cut tool
result's text into the caller's own block, so the input history is edited.

Breaks: contract §1 ("Required of every target: it never mutates its input", nested objects included); the
review of Zoo-Code PR #1617 mutation-tested exactly this (domain §3.7).
Code path: building the JSON result after degradation (``recover`` op).
"""

from typing import Any

from ._kit import Agent


class V(Agent):
    name = "bug-mutates-degraded-block"

    def recover(self, params: dict[str, Any]) -> dict[str, Any]:
        out = super().recover(params)
        if out["error"] is not None:
            return out
        given = iter(params["messages"])
        for message in out["messages"]:
            if message.get("isTruncationMarker") and message.get("truncationId") == out["truncationId"]:
                continue  # the marker this call inserted
            original = next(given)
            content = message.get("content")
            if isinstance(content, list) and isinstance(original.get("content"), list):
                for b, block in enumerate(content):
                    mine = original["content"][b]
                    if block.get("type") == "tool_result" and block != mine:
                        mine["content"] = block["content"]  # patch in place and share the block
                        content[b] = mine
        return out


describe, normalize, effective, request, recover, count = V().ops()
