"""Repeated ``tool_use`` ids are de-duplicated within each assistant message only: the set of seen ids is
rebuilt per message, so a later message that reuses an earlier call's id keeps it, with its results.

Breaks: contract §3 rule 5 (a ``tool_use`` id already used earlier in the request is removed, and so are
its results when it was in a later message).
Code path: rule 5's pass (``dedupe_tool_uses``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, ToolUse, same


class V(Agent):
    name = "bug-b2-norm-dedupe-per-message"

    def dedupe_tool_uses(self, history: Sequence[Message]) -> list[tuple[int, Message]]:
        out = []
        for index, message in enumerate(history):
            if message.role != "assistant" or isinstance(message.content, str):
                out.append((index, message))
                continue
            here = set()  # "ids must be unique within one assistant turn"
            kept = []
            for block in message.content:
                if isinstance(block, ToolUse):
                    if block.id in here:
                        continue
                    here.add(block.id)
                kept.append(block)
            if same(kept, message.content):
                out.append((index, message))
            elif kept:
                out.append((index, message.with_content(tuple(kept))))
        return out


describe, normalize, effective, request, recover, count = V().ops()
