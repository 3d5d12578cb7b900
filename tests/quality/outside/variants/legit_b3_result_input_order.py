"""Legitimate: declares ``resultOrder: any`` and keeps the valid results in the order they arrived,
appending the synthetic results of interrupted calls after them (Roo-Code's validator appends the
missing ones).

Mistake: none. Contract §3 policies: ``resultOrder: any`` (the default; the Anthropic API accepts
results in any order); rule 1 still holds (exactly one result per id, leading, the other blocks after
them in their original order), and the output is a fixpoint (rule 7).
Code path: pairing one user message (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Block, Message

from ._kit import Agent, ToolResult, declare, orphan_text, same


class V(Agent):
    name = "legit-b3-result-input-order"
    policies = declare(resultOrder="any")

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
                    kept.setdefault(rid, block)  # the first valid result wins; dict order = arrival order
                elif orphans == "to_text":
                    others.append(orphan_text(block))
                continue
            others.append(block)
        blocks = [*kept.values(), *(self.synthetic(u) for u in uses if u not in kept), *others]
        if same(blocks, content):
            return message
        if not blocks:
            return None
        return message.with_content(tuple(blocks))


describe, normalize, effective, request, recover, count = V().ops()
