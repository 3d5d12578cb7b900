"""A ``python:`` target whose normalize raises on one kind of input (an unguarded index)."""

from typing import Any

from ctxmodel.targets.reference import ReferenceTarget

_reference = ReferenceTarget()


def describe(params: dict[str, Any]) -> dict[str, Any]:
    return {**_reference.call("describe", {}), "name": "faulty-raising", "ops": ["describe", "normalize"]}


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    messages = params["messages"]
    if len(messages) >= 2:
        last_two = messages[-2]["content"][5]  # IndexError on short content, as real code does
        del last_two
    return _reference.call("normalize", params)
