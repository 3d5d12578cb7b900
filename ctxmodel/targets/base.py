"""What the harness knows of an implementation under test (contract §7).

Every transport (the built-in reference, a Python module, a JSON-lines process) gives the same
``Target``: ops are JSON-object-in, JSON-object-out, so the property suites never know which
transport they drive.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import attrs

from ctxmodel.errors import TargetError
from ctxmodel.policies import CHOICES

__all__ = ["DEFAULT_OPS", "DIALECTS", "OPS", "Description", "Target", "TargetFailure"]

#: The ops of contract §7, in the order a reader meets them.
OPS: tuple[str, ...] = ("describe", "normalize", "effective", "request", "recover", "count", "repair", "trim")

#: What a target that does not say which ops it offers is taken to offer (contract §7): every op but
#: ``trim``, which came later and is offered only when declared, so a target written before it is not
#: judged on an op it never heard of.
DEFAULT_OPS: frozenset[str] = frozenset(OPS) - {"describe", "trim"}

#: The message formats a target may declare (contract §7 ``dialect``); the first is the default.
DIALECTS: tuple[str, ...] = CHOICES["dialect"]

FailureKind = Literal["crash", "timeout", "protocol", "error-reply", "exception", "start"]


class TargetFailure(TargetError):
    """A call that produced no usable reply. ``kind`` says how; the message is one line."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@attrs.frozen
class Description:
    """The ``describe`` reply, or the contract's defaults for a target that has none."""

    name: str
    version: str
    ops: frozenset[str]
    tokenizer: str = "zoo"
    policies: dict[str, Any] = attrs.field(factory=dict)
    protocol: int = 1

    @property
    def dialect(self) -> str:
        """The declared message format (contract §7), kept with the policies (see ``ctxmodel.policies``)."""
        return str(self.policies.get("dialect", DIALECTS[0]))


class Target(Protocol):
    description: Description

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run one op. Raises ``TargetFailure`` for anything that is not a JSON-object reply."""
        ...

    def close(self) -> None: ...
