"""A tool result with list content is degraded by joining its text items into one string and cutting that:
the result's content becomes a string, so its images and other items are dropped.

Breaks: contract §4 rule 5 (degradation edits only textual tool_result text: never images or other items,
never the order of blocks).
Code path: one cut with its notice (``shrink``).
"""

import attrs

from ctxmodel.model import ToolResult

from ._kit import Agent, Text


class V(Agent):
    name = "bug-b2-shrink-flattens-list"

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        if item is None:
            return super().shrink(block, item, raw_to_free)
        if not isinstance(block.content, tuple):
            return None
        joined = "\n".join(i.text for i in block.content if isinstance(i, Text))
        return super().shrink(attrs.evolve(block, content=joined), None, raw_to_free)


describe, normalize, effective, request, recover, count = V().ops()
