"""Target specs on the command line (contract §7): ``reference``, ``python:pkg.mod[:obj]``, ``exec:COMMAND``.

``reference:DIALECT`` (``reference:openai-chat``) is the built-in target declaring another dialect: the
same in-process reference, so its gate time and its verdicts compare with ``reference``'s, rather
than a ``python:`` module that would add a worker process and hide that it is the reference.
"""

from __future__ import annotations

import re
from typing import Literal

import attrs

from ctxmodel.errors import UsageError
from ctxmodel.targets.base import Target
from ctxmodel.targets.process import DEFAULT_TIMEOUT

__all__ = ["TargetSpec", "open_target", "parse_spec"]


@attrs.frozen
class TargetSpec:
    kind: Literal["reference", "python", "exec"]
    #: The module path (``python``), the command (``exec``), or the dialect (``reference``; empty for
    #: the default).
    value: str = ""

    def __str__(self) -> str:
        return self.kind if self.kind == "reference" and not self.value else f"{self.kind}:{self.value}"


def parse_spec(text: str) -> TargetSpec:
    """A spec string, refused with one line naming what was expected (exit 2)."""
    text = text.strip()
    if text == "reference":
        return TargetSpec("reference")
    kind, sep, value = text.partition(":")
    if kind == "reference" and sep:
        from ctxmodel.targets.base import DIALECTS

        if value.strip() not in DIALECTS:
            raise UsageError(f"--target {text!r}: expected reference or reference:DIALECT, DIALECT one of "
                             f"{', '.join(DIALECTS)}")
        return TargetSpec("reference", "" if value.strip() == DIALECTS[0] else value.strip())
    if kind == "exec" and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", value.strip()):  # VAR=x cmd: run as `env VAR=x cmd`
        value = "env " + value.strip()
    if sep and kind in ("python", "exec") and value.strip():
        return TargetSpec("python" if kind == "python" else "exec", value.strip())
    raise UsageError(f"--target {text!r}: expected reference, python:package.module[:object] or exec:COMMAND")


def open_target(spec: str | TargetSpec, *, timeout: float = DEFAULT_TIMEOUT, in_process: bool = False) -> Target:
    """Start a target and read its ``describe``; raises ``TargetError`` when it cannot be driven.

    A ``python:`` target runs in a worker process with ``timeout`` per request, like an ``exec:``
    one (``ctxmodel.targets.python``); ``in_process=True`` imports it here instead (tests that hand
    Python objects over), where nothing protects the caller from it.
    """
    parsed = spec if isinstance(spec, TargetSpec) else parse_spec(spec)
    if parsed.kind == "reference":
        from ctxmodel.targets.reference import ReferenceTarget

        return ReferenceTarget(dialect=parsed.value or "anthropic")
    if parsed.kind == "python":
        from ctxmodel.targets.python import PythonTarget, PythonWorkerTarget

        if in_process:
            return PythonTarget(parsed.value)
        return PythonWorkerTarget(parsed.value, timeout=timeout)
    from ctxmodel.targets.process import ProcessTarget

    return ProcessTarget(parsed.value, timeout=timeout)
