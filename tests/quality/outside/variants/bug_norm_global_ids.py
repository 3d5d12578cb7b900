"""A result counts as paired when its ``tool_use`` exists anywhere earlier in the history (a global id set, as
getEffectiveApiHistory collects it), so a result answering an older call is kept, not treated as an orphan.

Breaks: contract §3 rule 4 (an orphan is any result whose id is not a ``tool_use`` of the message immediately
before; with ``orphans=drop`` it is dropped) and domain §8 question 3 (adjacency, not a global set).
Code path: the validity test for results (``pair`` with the ids seen so far).
"""

from collections.abc import Sequence

from ctxmodel.model import History, Message

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-norm-global-ids"

    def normalize_history(self, history: Sequence[Message], orphans: str = "drop", trailing: str = "leave") -> History:
        self.known = {b.id for m in history if m.role == "assistant" for b in m.tool_uses}
        return super().normalize_history(history, orphans, trailing)

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        paired = super().pair(message, uses, valid, orphans)
        if isinstance(message.content, str):
            return paired
        wanted = set(valid)
        older = [
            b
            for b in message.content
            if isinstance(b, ToolResult) and b.tool_use_id not in wanted and b.tool_use_id in self.known
        ]
        if not older:
            return paired
        head = paired.content if paired is not None else ()
        n = sum(1 for b in head if isinstance(b, ToolResult))
        return message.with_content((*head[:n], *older, *head[n:]))


describe, normalize, effective, request, recover, count = V().ops()
