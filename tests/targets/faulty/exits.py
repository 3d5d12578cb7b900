"""A ``python:`` target whose normalize calls ``sys.exit(0)`` on two messages or more.

In process this ended ``ctxmodel check`` with status 0 and the header only; in its worker it fails
that input, like any crash (contract §9).
"""

import sys
from typing import Any

from ctxmodel.targets.reference import ReferenceTarget

_reference = ReferenceTarget()


def describe(params: dict[str, Any]) -> dict[str, Any]:
    return {**_reference.call("describe", {}), "name": "faulty-exits", "ops": ["describe", "normalize"]}


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    if len(params["messages"]) >= 2:
        sys.exit(0)
    return _reference.call("normalize", params)
