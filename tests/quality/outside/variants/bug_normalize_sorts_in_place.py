"""Normalization moves results to the front with ``content.sort(...)`` on the caller's own lists (a stable sort
by "is not a tool_result"), so the input history is reordered.

Breaks: contract §1 ("Required of every target: it never mutates its input").
Code path: the results-first step of ``normalize`` (Zoo-Code's orderToolResultsFirst, domain §4.3, done in place).
"""

from typing import Any

from ._kit import Agent


class V(Agent):
    name = "bug-normalize-sorts-in-place"

    def normalize(self, params: dict[str, Any]) -> dict[str, Any]:
        for message in params.get("messages") or []:
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                content.sort(key=lambda b: not (isinstance(b, dict) and b.get("type") == "tool_result"))
        return super().normalize(params)


describe, normalize, effective, request, recover, count = V().ops()
