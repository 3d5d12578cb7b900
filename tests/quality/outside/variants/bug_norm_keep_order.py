"""Results are repaired in place: invalid and duplicate results are dropped and synthetic ones prepended, but the
message is never reordered, so a result after a text or an image (``[tool_result, image, tool_result]``) stays
where it was and the results do not lead the message.

Breaks: contract §3 rule 1 (the next user message *starts* with one result per ``tool_use`` id).
Code path: pairing one user message (``pair``), as validateAndFixToolResultIds does it (domain §4.1 step 6).
Results keep their stored order, so the variant declares ``resultOrder=any``.
"""

from collections.abc import Sequence

from ctxmodel.model import Block, Message

from ._kit import Agent, ToolResult, declare, orphan_text, same


class V(Agent):
    name = "bug-norm-keep-order"
    policies = declare(resultOrder="any")

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        if isinstance(message.content, str):
            return super().pair(message, uses, valid, orphans)
        wanted = set(valid)
        seen: set[str] = set()
        blocks: list[Block] = []
        for block in message.content:
            if isinstance(block, ToolResult):
                rid = block.tool_use_id
                if rid in wanted and rid not in seen:
                    seen.add(rid)
                    blocks.append(block)
                elif rid not in wanted and orphans == "to_text":
                    blocks.append(orphan_text(block))
                continue
            blocks.append(block)
        blocks = [self.synthetic(u) for u in uses if u not in seen] + blocks
        if not blocks:
            return None
        if same(blocks, message.content):
            return message
        return message.with_content(tuple(blocks))


describe, normalize, effective, request, recover, count = V().ops()
