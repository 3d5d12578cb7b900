"""Broken target (agent-loop witness): a truncation also tags the markers of earlier truncations.

Contract §4 rule 3: "never ... markers of earlier truncations". The first truncation is correct
(there is no earlier marker yet); only a second truncation, after more turns, shows the bug.
"""

from __future__ import annotations

from typing import Any

from ctxmodel.targets import reference


def describe(params: dict[str, Any]) -> dict[str, Any]:
    # The ops this module defines (it has no repair): a python target declares only what it offers.
    ops = ["describe", "normalize", "effective", "request", "recover", "count"]
    return {**reference.describe(params), "name": "broken-loop-marker", "ops": ops}


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_effective(params)


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_normalize(params)


def request(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_request(params)


def recover(params: dict[str, Any]) -> dict[str, Any]:
    result = reference.op_recover(params)
    tid = result.get("truncationId")
    if result.get("error") is not None or tid is None:
        return result
    old = {m.get("truncationId") for m in params["messages"] if m.get("isTruncationMarker")}
    # BUG: the visible markers of earlier truncations are swept into this one.
    result["messages"] = [
        {**m, "truncationParent": tid}
        if m.get("isTruncationMarker") and m.get("truncationId") in old and "truncationParent" not in m
        else m
        for m in result["messages"]
    ]
    return result


def count(params: dict[str, Any]) -> dict[str, Any]:
    return reference.op_count(params)
