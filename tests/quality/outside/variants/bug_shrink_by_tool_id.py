"""The degradation loop writes each cut back to "the tool_result for that tool_use_id", found by scanning the stored
history from the start, so when a hidden (condensed or truncated) message holds a result with the same id, the
hidden copy is cut and the visible one is left as it was.

Breaks: contract §4 rule 5 (degradation only of visible tool_result text) and rule 6 (progress).
Code path: locating the block to cut, by ``tool_use_id`` (``candidates`` maps each visible text to its stored place).
"""

from collections.abc import Sequence
from typing import cast

from ctxmodel.model import Message

from ._kit import Agent, ToolResult, Unit


class V(Agent):
    name = "bug-shrink-by-tool-id"

    def candidates(self, history: Sequence[Message], mask: list[bool]) -> list[Unit]:
        units = super().candidates(history, mask)
        out: list[Unit] = []
        for u in units:  # locate each candidate by id, the way the results are keyed everywhere else
            rid = cast(ToolResult, history[u.message].content[u.block]).tool_use_id
            where = self.find_result(history, rid)
            same_shape = where is not None and self._has_unit(history, where, u)
            out.append(Unit(where[0], where[1], u.item, u.chars) if same_shape else u)  # type: ignore[index]  # same_shape: where is not None
        return out

    @staticmethod
    def find_result(history: Sequence[Message], rid: str) -> tuple[int, int] | None:
        for i, m in enumerate(history):
            if isinstance(m.content, str):
                continue
            for b, block in enumerate(m.content):
                if isinstance(block, ToolResult) and block.tool_use_id == rid:
                    return i, b
        return None

    @staticmethod
    def _has_unit(history: Sequence[Message], where: tuple[int, int], u: Unit) -> bool:
        block = cast(ToolResult, history[where[0]].content[where[1]])  # find_result found a ToolResult there
        if u.item is None:
            return isinstance(block.content, str)
        return (
            isinstance(block.content, tuple)
            and u.item < len(block.content)
            and getattr(block.content[u.item], "type", None) == "text"
        )


describe, normalize, effective, request, recover, count = V().ops()
