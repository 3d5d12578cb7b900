"""``python:package.module[:object]`` targets: functions named after the ops (contract §7).

The module is imported with the working directory on ``sys.path`` (as pytest does), so a project
can point the gate at its own code without installing it. Each call hands the params over as they
are: callers pass a private copy (``TargetProbe`` does) and keep their own, so a target that mutates
its input is seen by the purity properties instead of being hidden by a copy. The reply is re-encoded
as strict JSON, which both checks that it is JSON and gives the harness a value the target can
no longer mutate.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ctxmodel.errors import TargetError, UsageError
from ctxmodel.targets.base import OPS, Description, TargetFailure
from ctxmodel.targets.reference import describe_exception

__all__ = ["PythonTarget", "parse_description"]


def parse_description(reply: Any, fallback_name: str) -> Description:
    """A ``describe`` reply checked against contract §7's shape; a wrong shape is a protocol break."""

    def bad(path: str, expected: str) -> TargetFailure:
        return TargetFailure("protocol", f"describe: {path}: expected {expected}")

    if not isinstance(reply, dict):
        raise bad("result", "an object")
    protocol = reply.get("protocol", 1)
    if protocol != 1:
        raise TargetFailure("protocol", f"describe: protocol {protocol!r} is not supported (ctxmodel speaks 1)")
    name = reply.get("name", fallback_name)
    version = reply.get("version", "")
    tokenizer = reply.get("tokenizer", "zoo")
    for key, value in (("name", name), ("version", version), ("tokenizer", tokenizer)):
        if not isinstance(value, str):
            raise bad(key, "a string")
    ops = reply.get("ops", [op for op in OPS if op != "describe"])
    if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
        raise bad("ops", "an array of op names")
    policies = reply.get("policies", {})
    if not isinstance(policies, dict) or not all(isinstance(v, str) for v in policies.values()):
        raise bad("policies", "an object of strings")
    return Description(
        name=name,
        version=version,
        ops=frozenset(ops) | {"describe"},
        tokenizer=tokenizer,
        policies=dict(policies),
        protocol=1,
    )


def strict_copy(value: Any, what: str) -> dict[str, Any]:
    """The reply as fresh strict JSON (no NaN, no tuples, no objects): what a process would send."""
    if not isinstance(value, dict):
        raise TargetFailure("protocol", f"{what}: expected a JSON object reply, got {type(value).__name__}")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TargetFailure("protocol", f"{what}: reply is not strict JSON: {exc}") from None
    out: dict[str, Any] = json.loads(text)
    return out


class PythonTarget:
    def __init__(self, spec: str) -> None:
        module_name, _, object_name = spec.partition(":")
        if not module_name:
            raise UsageError(f"python:{spec}: expected python:package.module[:object]")
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise TargetFailure("start", f"python:{spec}: cannot import: {describe_exception(exc)}") from None
        holder: Any = module
        if object_name:
            try:
                for part in object_name.split("."):
                    holder = getattr(holder, part)
            except AttributeError:
                raise TargetFailure("start", f"python:{spec}: {module_name} has no {object_name}") from None
            if isinstance(holder, type):
                # A class: one fresh instance per target, so state never leaks between runs.
                try:
                    holder = holder()
                except Exception as exc:
                    why = describe_exception(exc)
                    raise TargetFailure("start", f"python:{spec}: cannot instantiate: {why}") from None
        self.spec = spec
        self._ops: dict[str, Callable[[dict[str, Any]], Any]] = {
            op: getattr(holder, op) for op in OPS if callable(getattr(holder, op, None))
        }
        if not self._ops:
            raise TargetFailure("start", f"python:{spec}: defines none of the ops {', '.join(OPS)}")
        if "describe" in self._ops:
            try:
                reply = self.call("describe", {})
            except TargetError as exc:
                raise TargetFailure("start", f"python:{spec}: describe failed: {exc}") from None
            self.description = parse_description(reply, module_name)
            self.description = Description(
                name=self.description.name,
                version=self.description.version,
                ops=self.description.ops & frozenset(self._ops),
                tokenizer=self.description.tokenizer,
                policies=self.description.policies,
            )
        else:
            self.description = Description(name=module_name, version="", ops=frozenset(self._ops))

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        fn = self._ops.get(op)
        if fn is None:
            raise TargetFailure("error-reply", f"python:{self.spec} has no op {op!r}")
        try:
            reply = fn(params)
        except Exception as exc:
            raise TargetFailure("exception", f"{op}: {describe_exception(exc)}") from None
        return strict_copy(reply, op)

    def close(self) -> None:
        pass
