"""Legitimate variant: results in the order they arrived, synthetic ones after (``resultOrder: any``).

The Anthropic API accepts results in any order (contract §3 policies); only a target that declares
``resultOrder: tool_use`` owes the tool_use order.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def arrival_order(history: list[Msg], out: list[Msg]) -> list[Msg]:
    arrived: dict[str, int] = {}
    for msg in history:
        content = msg.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                arrived.setdefault(str(block.get("tool_use_id")), len(arrived))
    for msg in out:
        content = msg.get("content")
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        n = 0
        while n < len(content) and content[n].get("type") == "tool_result":
            n += 1
        lead = sorted(content[:n], key=lambda b: arrived.get(str(b.get("tool_use_id")), len(arrived)))
        msg["content"] = lead + content[n:]
    return out


class Variant(Reference):
    name = "variant-arrival-order"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "resultOrder": "any"}

    def normalize(self, params: Params) -> Params:
        return {"messages": arrival_order(params["messages"], super().normalize(params)["messages"])}

    def request(self, params: Params) -> Params:
        visible = super().effective(params)["messages"]
        return self.normalize({**params, "messages": visible})
