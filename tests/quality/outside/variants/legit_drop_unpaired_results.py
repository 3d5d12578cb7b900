"""Legitimate: the effective history also drops ``tool_result`` blocks whose ``tool_use`` is not in it (cloning the
message, removing one this empties), as getEffectiveApiHistory Branch A does (domain §2.1), in both branches.

Contract: §2 "a target **may** also drop tool_result blocks whose tool_use is not in the effective history
(cloning that message); if it does, it removes a message this empties". Recovery counts with this effective
history (the harness recounts with the target's own ``effective``) and never shrinks a dropped result.
Code path: ``effective_history`` and the candidate scan (``candidates``).
"""

from collections.abc import Sequence
from typing import cast

from ctxmodel.model import History, Message

from ._kit import Agent, ToolResult, Unit, uses_of


class V(Agent):
    name = "legit-drop-unpaired-results"

    def effective_history(self, history: Sequence[Message]) -> History:
        shown = super().effective_history(history)
        calls = {u for m in shown for u in uses_of(m)}
        out: list[Message] = []
        for m in shown:
            if m.role != "user" or isinstance(m.content, str):
                out.append(m)
                continue
            kept = tuple(b for b in m.content if not (isinstance(b, ToolResult) and b.tool_use_id not in calls))
            if len(kept) == len(m.content):
                out.append(m)
            elif kept:
                out.append(m.with_content(kept))
        return tuple(out)

    def candidates(self, history: Sequence[Message], mask: list[bool]) -> list[Unit]:
        calls = {u for m in super().effective_history(history) for u in uses_of(m)}
        return [
            u
            for u in super().candidates(history, mask)
            if cast(ToolResult, history[u.message].content[u.block]).tool_use_id in calls
        ]


describe, normalize, effective, request, recover, count = V().ops()
