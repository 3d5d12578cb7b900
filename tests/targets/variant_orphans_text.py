"""Legitimate variant: orphans turned to text (``orphans: to_text``, Roo-Code's append path, domain
§2.3) with its own serialization of list content: each item's text on its own line, images as
``[image]``. Contract §3.4 asks only that each text item's text is kept.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.properties.json_reading import use_ids
from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def _flatten(content: list[Any]) -> str:
    return "\n".join(i.get("text", "") if i.get("type") == "text" else f"[{i.get('type')}]" for i in content)


def flatten_orphans(history: list[Msg]) -> list[Msg]:
    """Orphans' list content as lines of text, before the reference turns them to text verbatim."""
    out = []
    for k, msg in enumerate(history):
        content = msg.get("content")
        if msg.get("role") == "user" and isinstance(content, list):
            ids = set(use_ids(history[k - 1])) if k else set()
            msg = {**msg, "content": [
                {**b, "content": _flatten(b["content"])}
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in ids
                and isinstance(b.get("content"), list)
                else b
                for b in content
            ]}
        out.append(msg)
    return out


class Variant(Reference):
    name = "variant-orphans-text"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "orphans": "to_text"}

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "messages": flatten_orphans(params["messages"])})

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": super().effective(params)["messages"]})
