"""Legitimate variant: Zoo-Code's sliding window (domain §3.3) made valid, ``recoverSuccess: converges``.

Each call hides half of the visible messages after the first, rounded down to even, never leaving a
kept result without its call, with one marker; over budget afterwards is a success, because the
agent retries (contract §4.7). It looks ahead: when halving cannot reach the budget within this call
and three more, or makes no progress, it returns a controlled error now (a warning where the
reference recovers, never a failure).
"""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

from tests.targets.variant_reference import Params, Reference, allowed, failed, recount, visible

Msg = dict[str, Any]
_ids = itertools.count()


def _holds_results(msg: Msg) -> bool:
    content = msg.get("content")
    return msg.get("role") == "user" and isinstance(content, list) and any(
        b.get("type") == "tool_result" for b in content
    )


def half_cut(messages: list[Msg], truncation_id: str) -> tuple[list[Msg], int] | None:
    mask = visible(messages)
    positions = [i for i, v in enumerate(mask) if v and messages[i].get("isTruncationMarker") is not True]
    if len(positions) < 3 or positions[0] != mask.index(True):
        return None
    raw = (len(positions) - 1) // 2
    n = raw - raw % 2
    while n > 0 and _holds_results(messages[positions[n + 1]]):
        n -= 1
    if n <= 0:
        return None
    out = [dict(m) for m in messages]
    for i in positions[1 : n + 1]:
        out[i]["truncationParent"] = truncation_id
    marker = {
        "role": "user",
        "content": f"[Sliding window truncation: {n} messages hidden to reduce context]",
        "isTruncationMarker": True,
        "truncationId": truncation_id,
    }
    out.insert(positions[n + 1], marker)
    return out, n


class Variant(Reference):
    name = "variant-zoo-halves"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "recoverSuccess": "converges"}

    def recover(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        system = params.get("systemPrompt", "")
        budget = allowed(params)
        if budget <= 0:
            return failed(params, f"allowed tokens {budget} <= 0")
        before = recount(messages, system)
        if before <= budget:
            return {"messages": messages, "error": None, "messagesRemoved": 0, "prevContextTokens": before,
                    "newContextTokens": before, "truncationId": None}
        steps: list[tuple[list[Msg], int, int, str]] = []
        current, tokens = messages, before
        for _ in range(4):
            tid = f"zoo-{next(_ids)}"
            cut = half_cut(current, tid)
            if cut is None:
                break
            after = recount(cut[0], system)
            if after >= tokens:
                break
            steps.append((cut[0], cut[1], after, tid))
            current, tokens = cut[0], after
            if tokens <= budget:
                break
        if not steps or tokens > budget:
            return failed(params, "halving the visible messages cannot reach the budget")
        out, removed, after, tid = steps[0]
        return {"messages": out, "error": None, "messagesRemoved": removed, "prevContextTokens": before,
                "newContextTokens": after, "truncationId": tid}
