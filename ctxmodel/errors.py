"""Errors users see: one line that names the place, never a traceback (contract §1, §9)."""

from __future__ import annotations

import traceback

__all__ = ["CtxmodelError", "HistoryError", "TargetError", "UsageError"]


class CtxmodelError(Exception):
    """Base of every error ctxmodel reports to a person; ``str()`` is the one line to print."""


class HistoryError(CtxmodelError, ValueError):
    """Input that is not a history of the stored format.

    ``path`` is the JSON path in the API's own style (``messages.3.content.1.tool_use_id``);
    ``source`` the file it came from, when there is one.
    """

    def __init__(self, path: str, message: str, source: str | None = None) -> None:
        super().__init__(path, message, source)
        self.path = path
        self.message = message
        self.source = source

    def at(self, source: str) -> HistoryError:
        return HistoryError(self.path, self.message, source)

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.source, self.path) if p)
        return f"{where}: {self.message}" if where else self.message


class UsageError(CtxmodelError):
    """A command line that does not make sense (exit 2)."""


class TargetError(CtxmodelError):
    """A target that cannot be started, crashed, hung or broke the protocol."""


def describe_exception(exc: BaseException) -> str:
    """``Type: message (at file:line)``: the innermost frame, where the bug most likely is."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}{where}" if text else f"{type(exc).__name__}{where}"
