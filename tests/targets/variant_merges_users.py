"""Legitimate variant: pydantic-ai's merge, ``mergeUsers: yes`` with ``inputs: untagged``. Before
repairing pairing it joins each run of consecutive user messages into one (its blocks in order,
string content as a text block, the first message's keys), as ``_merge_consecutive_messages`` does
to adjacent requests; its histories never hold Roo's visibility keys.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def join_users(history: list[Msg]) -> list[Msg]:
    out: list[Msg] = []
    for msg in history:
        if out and out[-1].get("role") == "user" and msg.get("role") == "user":
            head = out[-1]
            parts = [
                part
                for content in (head.get("content"), msg.get("content"))
                for part in ([{"type": "text", "text": content}] if isinstance(content, str) else content or [])
            ]
            out[-1] = {**head, "content": parts}
        else:
            out.append(msg)
    return out


class Variant(Reference):
    name = "variant-merges-users"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "inputs": "untagged", "mergeUsers": "yes"}

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "messages": join_users(params["messages"])})

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": super().effective(params)["messages"]})
