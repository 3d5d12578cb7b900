"""A JSON-lines target over the reference (contract §7), with one hook to misbehave.

Each faulty script passes ``misbehave(request) -> bool``: return True when it has done its own
(bad) thing with the request instead of answering it properly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from ctxmodel.targets.base import TargetFailure
from ctxmodel.targets.reference import ReferenceTarget


def write(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def serve(misbehave: Callable[[dict[str, Any]], bool] = lambda _: False) -> None:
    reference = ReferenceTarget()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if misbehave(request):
            continue
        try:
            write({"id": request["id"], "result": reference.call(request["op"], request["params"])})
        except TargetFailure as exc:
            write({"id": request["id"], "error": {"message": str(exc)}})


def many(request: dict[str, Any]) -> bool:
    """The trigger: a normalize call on two messages or more (so the shrunk input has exactly two)."""
    return request["op"] == "normalize" and len(request["params"].get("messages", [])) >= 2
