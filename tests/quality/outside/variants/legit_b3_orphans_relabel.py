"""Legitimate: declares ``orphans: relabel``. An orphan result in a user message whose previous message
has a call left without a valid result is given that call's id (in order: first orphan, first such call)
instead of a synthetic "interrupted" result; the remaining orphans are dropped. Cline-style recovery of
results stored under a stale id.

Mistake: none. Contract §3 rule 4 (``relabel``: as ``any``, and an orphan may take the id of a
``tool_use`` of the previous message that has no valid result — never one that has); rule 2 (valid
results keep their ids); rule 7 (the relabelled result is valid on the next pass).
Code path: pairing one user message (``pair``), plus reading the declared policy (``options``).
"""

from collections.abc import Sequence
from typing import Any

import attrs

from ctxmodel.model import Message

from ._kit import Agent, ToolResult, declare, same


class V(Agent):
    name = "legit-b3-orphans-relabel"
    policies = declare(orphans="relabel")

    def options(self, params: dict[str, Any]) -> dict[str, str]:
        out = super().options(params)
        if {**self.policies, **(params.get("policies") or {})}.get("orphans") == "relabel":
            out["orphans"] = "relabel"
        return out

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        content = message.content
        if orphans != "relabel" or isinstance(content, str):
            return super().pair(message, uses, valid, "drop" if orphans == "relabel" else orphans)
        wanted = set(valid)
        kept: dict[str, ToolResult] = {}
        stray: list[ToolResult] = []
        others = []
        for block in content:
            if isinstance(block, ToolResult):
                if block.tool_use_id in wanted:
                    kept.setdefault(block.tool_use_id, block)
                elif block.tool_use_id not in set(uses):  # an orphan (not a duplicate valid result)
                    stray.append(block)
                continue
            others.append(block)
        for u in valid:  # calls of the previous message with no valid result take the orphans in order
            if u not in kept and stray:
                kept[u] = attrs.evolve(stray.pop(0), tool_use_id=u)
        blocks = [kept[u] if u in kept else self.synthetic(u) for u in uses] + others
        if same(blocks, content):
            return message
        if not blocks:
            return None
        return message.with_content(tuple(blocks))


describe, normalize, effective, request, recover, count = V().ops()
