"""A cut tool result is rebuilt as a fresh block from its id and the new content (the TypeScript
``{type: "tool_result", tool_use_id, content}`` literal), so a degraded error result loses its
``is_error: true`` (and any other key, such as ``cache_control``).

Breaks: contract §4 rule 5 (degradation edits only tool-result text, never ``is_error``).
Code path: one cut with its notice (``shrink``).
"""

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-b3-shrink-rebuilds-result"

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        got = super().shrink(block, item, raw_to_free)
        if got is None:
            return None
        rebuilt = ToolResult(block.tool_use_id, got[0].content)
        return rebuilt, self.counter.raw_block(rebuilt)


describe, normalize, effective, request, recover, count = V().ops()
