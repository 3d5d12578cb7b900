"""Broken target (agent-loop witness): its visibility hides a message for any ``condenseParent`` or
``truncationParent`` tag, whether or not the summary or marker it names still exists.

Contract §2: "a parent that no longer exists hides nothing (rewind restores)". Single calls on fresh
histories rarely show it; an agent session does: condense (or truncate), then rewind past the
summary (or marker) — the messages it hid stay hidden. Needs two or more steps.
"""

from __future__ import annotations

from typing import Any

from ctxmodel.targets import reference


def describe(params: dict[str, Any]) -> dict[str, Any]:
    # The ops this module defines: a python target declares only what it offers.
    ops = ["describe", "normalize", "effective", "request", "recover", "count"]
    return {**reference.describe(params), "name": "broken-loop-rewind", "ops": ops}


def _stale_effective(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    visible = reference.op_effective({"messages": messages})["messages"]
    # BUG: any parent tag hides, even a dangling one.
    return [m for m in visible if (not m.get("condenseParent") and not m.get("truncationParent")) or m.get("isSummary")]


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": _stale_effective(params["messages"])}


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_normalize(params)


def request(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_normalize({**params, "messages": _stale_effective(params["messages"])})


def recover(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_recover(params)


def count(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_count(params)
