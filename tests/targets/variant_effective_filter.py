"""Legitimate variant: an orphan-result filter in ``effective`` (contract §2 allowance; Roo-Code's
``getEffectiveApiHistory`` after a condense, domain §2.1): results whose ``tool_use`` is not in the
effective history are dropped, the message cloned, an emptied message removed. It offers no
``recover``: a recovery of its own would have to count with this filter.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


class Variant(Reference):
    name = "variant-effective-filter"
    ops: ClassVar[list[str]] = ["describe", "normalize", "effective", "request", "count"]

    def effective(self, params: Params) -> Params:
        visible: list[Msg] = super().effective(params)["messages"]
        ids = {
            b.get("id") for m in visible if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_use"
        }
        out = []
        for msg in visible:
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, list):
                kept = [b for b in content if b.get("type") != "tool_result" or b.get("tool_use_id") in ids]
                if len(kept) != len(content):
                    if not kept:
                        continue
                    msg = {**msg, "content": kept}
            out.append(msg)
        return {"messages": out}

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": self.effective(params)["messages"]})
