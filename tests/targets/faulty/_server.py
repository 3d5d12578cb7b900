"""A minimal JSON-lines target (contract §7) with one hook to misbehave.

It answers ``normalize`` and ``effective`` by echoing the messages (correct for the toy histories the
gate tests use) and imports nothing but the standard library, so the many restarts a crashing
target causes while Hypothesis shrinks stay cheap. Each faulty script passes
``misbehave(request) -> bool``: True when it has done its own (bad) thing instead of answering.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

DESCRIPTION = {
    "protocol": 1,
    "name": "faulty-echo",
    "version": "0",
    "ops": ["describe", "normalize", "effective"],
    "tokenizer": "zoo",
    "policies": {},
}


def write(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(op: str, params: dict[str, Any]) -> dict[str, Any]:
    if op == "describe":
        return DESCRIPTION
    if op in ("normalize", "effective"):
        return {"messages": params["messages"]}
    raise KeyError(op)


def serve(misbehave: Callable[[dict[str, Any]], bool] = lambda _: False) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if misbehave(request):
            continue
        try:
            write({"id": request["id"], "result": answer(request["op"], request["params"])})
        except KeyError as exc:
            write({"id": request["id"], "error": {"message": f"unknown op {exc}"}})


def many(request: dict[str, Any]) -> bool:
    """The trigger: a normalize call on two messages or more (so the shrunk input has exactly two)."""
    return request["op"] == "normalize" and len(request["params"].get("messages", [])) >= 2
