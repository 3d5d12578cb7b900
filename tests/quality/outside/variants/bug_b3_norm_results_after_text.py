"""A valid result that comes after a text or image block is taken for an orphan: only the leading run of
``tool_result`` blocks is read as the answer to the calls, so the genuine result is dropped (or turned to
text) and the call gets a synthetic "interrupted" result instead.

Breaks: contract §3 rule 2 (a valid result is kept with its content; validity is adjacency, not position
inside the message) and rule 4 (it is not an orphan).
Code path: pairing one user message (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Block, Message

from ._kit import Agent, ToolResult, orphan_text, same


class V(Agent):
    name = "bug-b3-norm-results-after-text"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        content = message.content
        if isinstance(content, str):
            return super().pair(message, uses, valid, orphans)
        lead = 0  # the API reads the leading run of results, so only that run answers the calls
        while lead < len(content) and isinstance(content[lead], ToolResult):
            lead += 1
        wanted = set(valid)
        kept: dict[str, ToolResult] = {}
        others: list[Block] = []
        for i, block in enumerate(content):
            if isinstance(block, ToolResult):
                if i < lead and block.tool_use_id in wanted:
                    kept.setdefault(block.tool_use_id, block)
                elif orphans == "to_text":
                    others.append(orphan_text(block))
                continue
            others.append(block)
        blocks = [kept[u] if u in kept else self.synthetic(u) for u in uses] + others
        if same(blocks, content):
            return message
        if not blocks:
            return None
        return message.with_content(tuple(blocks))


describe, normalize, effective, request, recover, count = V().ops()
