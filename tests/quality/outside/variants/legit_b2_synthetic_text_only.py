"""Legitimate: a missing result is stood in for by Zoo-Code's synthetic result, marked by its text
("... interrupted ...") and carrying no ``is_error``.

Mistake: none. Contract §3 rule 3 allows the mark by ``is_error: true`` and/or by text containing
"interrupt"; the exact synthetic result is a reference choice.
Code path: synthetic results (``synthetic``).
"""

from ._kit import Agent, ToolResult


class V(Agent):
    name = "legit-b2-synthetic-text-only"

    def synthetic(self, tool_use_id: str) -> ToolResult:
        return ToolResult(tool_use_id, "Tool execution was interrupted before completion.")


describe, normalize, effective, request, recover, count = V().ops()
