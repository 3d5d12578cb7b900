"""Legitimate: of several valid results for one ``tool_use`` id, the last one is kept (the reference keeps the first).

Contract: §3 rule 2 "for each id, one of them is kept with its content and is_error unchanged (the reference
keeps the first); the others are dropped".
Code path: de-duplicating results while pairing (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, ToolResult


class V(Agent):
    name = "legit-keep-last-duplicate"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        if not isinstance(message.content, str):
            wanted = set(valid)
            last = {
                b.tool_use_id: i
                for i, b in enumerate(message.content)
                if isinstance(b, ToolResult) and b.tool_use_id in wanted
            }
            content = tuple(
                b
                for i, b in enumerate(message.content)
                if not (isinstance(b, ToolResult) and b.tool_use_id in wanted and last[b.tool_use_id] != i)
            )
            if len(content) != len(message.content):
                message = message.with_content(content)
        return super().pair(message, uses, valid, orphans)


describe, normalize, effective, request, recover, count = V().ops()
