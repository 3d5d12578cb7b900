"""Broken target (agent-loop witness): a tool result that an earlier recovery already degraded gets
a second notice on every later call, so it grows (domain §3.7, reviewer finding 1).

Contract §4 rule 5: every edited block strictly shrinks (and rule 2: a history within budget is
left unchanged). Only a block holding a truncation notice triggers it, and only a previous
``recover`` puts one there: a large tool result, a recovery that degrades it, then another call.
"""

from __future__ import annotations

from typing import Any

from ctxmodel.targets import reference

NOTICE = "[Tool result truncated:"


def describe(params: dict[str, Any]) -> dict[str, Any]:
    # The ops this module defines: a python target declares only what it offers.
    ops = ["describe", "normalize", "effective", "request", "recover", "count"]
    return {**reference.describe(params), "name": "broken-loop-degrade", "ops": ops}


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_effective(params)


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_normalize(params)


def request(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_request(params)


def _renotice(block: Any) -> Any:
    if isinstance(block, dict) and block.get("type") == "tool_result":
        content = block.get("content")
        if isinstance(content, str) and NOTICE in content:
            # BUG: "degrades" an already-degraded block again by adding a notice, cutting nothing.
            return {**block, "content": content + "\n" + NOTICE + " 0 characters removed to fit the context budget]"}
    return block


def recover(params: dict[str, Any]) -> dict[str, Any]:
    result = reference.op_recover(params)
    if result.get("error") is not None:
        return result
    result["messages"] = [
        {**m, "content": [_renotice(b) for b in m["content"]]} if isinstance(m.get("content"), list) else m
        for m in result["messages"]
    ]
    return result


def count(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_count(params)
