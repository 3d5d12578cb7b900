"""When an assistant message loses a repeated ``tool_use``, its content is rebuilt from the blocks the
code knows it sends (text and the kept ``tool_use`` blocks): the thinking and redacted-thinking blocks of
that message (and any unknown block) are dropped. Messages without a repeated id are untouched.

Breaks: contract §3 rule 6 (thinking blocks stay first and unchanged; everything else is kept).
Code path: rule 5, the removal of repeated ``tool_use`` ids (``dedupe_tool_uses``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, Text, ToolUse


class V(Agent):
    name = "bug-b3-norm-dedupe-drops-thinking"

    def dedupe_tool_uses(self, history: Sequence[Message]) -> list[tuple[int, Message]]:
        out = []
        for index, message in super().dedupe_tool_uses(history):
            original = history[index]
            if message is not original and message.role == "assistant":
                rebuilt = tuple(b for b in message.blocks if isinstance(b, Text | ToolUse))
                if not rebuilt:
                    continue
                message = message.with_content(rebuilt)
            out.append((index, message))
        return out


describe, normalize, effective, request, recover, count = V().ops()
