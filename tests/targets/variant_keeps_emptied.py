"""Legitimate variant: a user message emptied by rule 5 (its results belonged to a removed duplicate
``tool_use``) is kept, holding the synthetic results the call before it needs, with its metadata —
instead of being removed and replaced by a fresh message (contract §3.5 allows either).
"""

from __future__ import annotations

from typing import Any

from tests.targets.variant_reference import Params, Reference, visible

Msg = dict[str, Any]


def remove_duplicates(history: list[Msg]) -> list[Msg]:
    """Contract §3.5 by hand, keeping an emptied user message when the call before it awaits results.

    The rule applies between the messages the API is sent (contract §3): a hidden message passes
    through where it was, and neither its ids nor its place count."""
    seen: set[str] = set()
    out: list[Msg] = []
    shown: list[Msg] = []
    later: set[str] = set()
    for msg, is_visible in zip(history, visible(history), strict=True):
        if not is_visible:
            out.append(msg)
            continue
        content = msg.get("content")
        drop, later = later, set()
        new = msg
        if msg.get("role") == "assistant" and isinstance(content, list):
            here: set[str] = set()
            kept = []
            for b in content:
                if b.get("type") == "tool_use":
                    if b.get("id") in seen:
                        if b.get("id") not in here:
                            later.add(b.get("id"))
                        continue
                    seen.add(b.get("id"))
                    here.add(b.get("id"))
                kept.append(b)
            new = {**msg, "content": kept}
        elif msg.get("role") == "user" and isinstance(content, list) and drop:
            new = {**msg, "content": [
                b for b in content if not (b.get("type") == "tool_result" and b.get("tool_use_id") in drop)
            ]}
        if new.get("content") == [] and content not in ([], ""):
            prev = shown[-1] if shown else None
            awaits = prev is not None and prev.get("role") == "assistant" and isinstance(prev.get("content"), list) \
                and any(b.get("type") == "tool_use" for b in prev["content"])
            decides = new.get("isSummary") or new.get("isTruncationMarker")
            if not (new.get("role") == "user" and awaits) and not decides:
                continue
        out.append(new)
        shown.append(new)
    return out


class Variant(Reference):
    name = "variant-keeps-emptied"

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "messages": remove_duplicates(params["messages"])})

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": super().effective(params)["messages"]})
