"""A ``tool_use`` id repeated in a later message is removed together with "its results", found by id
over the whole history: the results of the first, legitimate call with that id go too, and that call is
answered by a synthetic "interrupted" result although its real result was right after it.

Breaks: contract §3 rule 5 (only the later block's results are removed, when it was in a later message)
and rule 2 (the first call's valid result is kept with its content).
Code path: rule 5, the removal of repeated ``tool_use`` ids (``dedupe_tool_uses``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, ToolResult, ToolUse, same


class V(Agent):
    name = "bug-b3-norm-dup-id-kills-first"

    def dedupe_tool_uses(self, history: Sequence[Message]) -> list[tuple[int, Message]]:
        seen: set[str] = set()
        repeated: set[str] = set()
        for message in history:
            here = {u.id for u in message.tool_uses} if message.role == "assistant" else set()
            repeated |= here & seen
            seen |= here
        seen = set()
        out = []
        for index, message in enumerate(history):
            content = message.content
            if isinstance(content, str):
                out.append((index, message))
                continue
            if message.role == "assistant":
                here = set()
                kept = []
                for block in content:
                    if isinstance(block, ToolUse):
                        if block.id in seen or block.id in here:
                            continue
                        here.add(block.id)
                    kept.append(block)
                seen |= here
            else:  # drop the results of every repeated id
                kept = [b for b in content if not (isinstance(b, ToolResult) and b.tool_use_id in repeated)]
            if same(kept, content):
                out.append((index, message))
            elif kept:
                out.append((index, message.with_content(tuple(kept))))
        return out


describe, normalize, effective, request, recover, count = V().ops()
