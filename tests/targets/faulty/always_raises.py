"""A ``python:`` target whose normalize raises on every call: nothing it returns can be judged."""

from typing import Any

from ctxmodel.targets.reference import ReferenceTarget

_reference = ReferenceTarget()


def describe(params: dict[str, Any]) -> dict[str, Any]:
    return {**_reference.call("describe", {}), "name": "faulty-always-raises", "ops": ["describe", "normalize"]}


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("normalize is not implemented")
