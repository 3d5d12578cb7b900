"""Legitimate variant: Roo-Code's remap (domain §4.1 step 4), ``orphans: relabel``. An orphan in a
message after a ``tool_use`` message takes the id of the call at its position among the results,
when that call has no valid result and no other orphan took it; other orphans are dropped.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.properties.json_reading import use_ids
from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def remap(history: list[Msg]) -> list[Msg]:
    out = []
    for k, msg in enumerate(history):
        content = msg.get("content")
        ids = use_ids(history[k - 1]) if k else []
        if msg.get("role") == "user" and isinstance(content, list) and ids:
            taken = {b.get("tool_use_id") for b in content if b.get("type") == "tool_result"} & set(ids)
            blocks = []
            position = 0
            for b in content:
                if b.get("type") == "tool_result":
                    if b.get("tool_use_id") not in ids and position < len(ids) and ids[position] not in taken:
                        taken.add(ids[position])
                        b = {**b, "tool_use_id": ids[position]}
                    position += 1
                blocks.append(b)
            msg = {**msg, "content": blocks}
        out.append(msg)
    return out


class Variant(Reference):
    name = "variant-relabel"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "orphans": "relabel"}

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "messages": remap(params["messages"])})

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": super().effective(params)["messages"]})
