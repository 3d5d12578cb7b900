"""Declares results in ``tool_use`` order (Bedrock), but puts the results that arrived first, in
``tool_use`` order, and appends the synthetic ones for the interrupted calls after them: when an earlier
call of a parallel batch is the interrupted one, the results are out of ``tool_use`` order.

Breaks: contract §3 policies (``resultOrder: tool_use``, which it declares: results in ``tool_use`` order).
Code path: pairing one user message (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Block, Message

from ._kit import Agent, ToolResult, orphan_text, same


class V(Agent):
    name = "bug-b3-norm-synthetic-appended"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        content = message.content
        if isinstance(content, str):
            return super().pair(message, uses, valid, orphans)
        wanted = set(valid)
        kept: dict[str, ToolResult] = {}
        others: list[Block] = []
        for block in content:
            if isinstance(block, ToolResult):
                rid = block.tool_use_id
                if rid in wanted:
                    kept.setdefault(rid, block)
                elif orphans == "to_text":
                    others.append(orphan_text(block))
                continue
            others.append(block)
        answered = [kept[u] for u in uses if u in kept]
        interrupted = [self.synthetic(u) for u in uses if u not in kept]
        blocks = answered + interrupted + others
        if same(blocks, content):
            return message
        if not blocks:
            return None
        return message.with_content(tuple(blocks))


describe, normalize, effective, request, recover, count = V().ops()
