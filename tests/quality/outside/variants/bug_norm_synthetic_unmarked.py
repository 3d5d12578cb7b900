"""The synthetic result for a missing one says "Tool execution did not complete." with no ``is_error``, so the
model cannot tell it from a real, empty-handed success.

Breaks: contract §3 rule 3 (a synthetic result is marked: ``is_error: true`` and/or text containing "interrupt").
Code path: building the synthetic result (``synthetic``).
"""

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-norm-synthetic-unmarked"

    def synthetic(self, tool_use_id: str) -> ToolResult:
        return ToolResult(tool_use_id, "Tool execution did not complete.")


describe, normalize, effective, request, recover, count = V().ops()
