"""What a run tells the world, as events: the engine emits them, reporters and schedulers handle them.

A run is told through one stream so that every way of watching it (the text report, JUnit, the
``--coverage`` table, the heartbeat, the pytest plugin, a worker process reporting to its parent)
sees the same thing in the same order, whichever scheduler ran the properties. A scheduler that runs
properties out of order (``check --jobs N``) records each property's events and emits them when the
property's result is kept, in property order, so a handler cannot tell it from a one-process run.

An event is a frozen value; a handler is anything with ``handle(event)``. A handler may say which
event types it wants (``handles``, a set of types): the engine skips the work of making events nobody wants (a copy
of every drawn input, for ``ExampleDrawn``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

from ctxmodel.properties.catalogue import Property
from ctxmodel.results import GateReport, Kind, Outcome

__all__ = [
    "Callback",
    "Emitter",
    "Event",
    "ExampleDrawn",
    "FixtureWritten",
    "Handler",
    "Heartbeat",
    "KindMet",
    "PropertyFinished",
    "PropertyStarted",
    "RunFinished",
    "RunStarted",
    "TargetFault",
    "WarningMet",
]


@attrs.frozen
class Event:
    """The base of every event (a type to dispatch on)."""


@attrs.frozen
class RunStarted(Event):
    seed: int
    profile: str
    properties: tuple[str, ...]


@attrs.frozen
class PropertyStarted(Event):
    prop: Property


@attrs.frozen
class ExampleDrawn(Event):
    """A generated input (shrink steps are not examples); ``params`` is the handler's own copy."""

    prop: Property
    params: dict[str, Any]


@attrs.frozen
class KindMet(Event):
    """A failure kind met for the first time in this property's run, at example ``example``."""

    prop: Property
    key: str
    example: int


@attrs.frozen
class FixtureWritten(Event):
    """A kind's fixture is on disk (a shrunk one, or a trimmed one replacing it)."""

    prop: Property
    key: str
    path: Path


@attrs.frozen
class WarningMet(Event):
    prop: Property
    kind: Kind


@attrs.frozen
class TargetFault(Event):
    """A target fault a property reported; later properties reject inputs that meet it."""

    prop: Property
    key: str


@attrs.frozen
class Heartbeat(Event):
    """A property still at work (sent live, even by a scheduler that reorders the rest)."""

    prop_id: str
    text: str


@attrs.frozen
class PropertyFinished(Event):
    outcome: Outcome


@attrs.frozen
class RunFinished(Event):
    report: GateReport


@runtime_checkable
class Handler(Protocol):
    def handle(self, event: Event) -> None: ...


@attrs.frozen
class Callback:
    """A plain function as a handler, for the event types given (all when empty)."""

    function: Callable[[Any], None]
    handles: frozenset[type[Event]] = frozenset()

    def handle(self, event: Event) -> None:
        self.function(event)


def _wanted(handler: Handler) -> frozenset[type[Event]]:
    return frozenset(getattr(handler, "handles", None) or ())


@attrs.define
class Emitter:
    """Hands each event to the handlers that want it, in order."""

    handlers: Sequence[Handler] = ()

    def __call__(self, event: Event) -> None:
        for handler in self.handlers:
            types = _wanted(handler)
            if not types or isinstance(event, tuple(types)):
                handler.handle(event)

    def wants(self, kind: type[Event]) -> bool:
        return any(not _wanted(h) or any(issubclass(kind, t) for t in _wanted(h)) for h in self.handlers)

    @classmethod
    def of(cls, handlers: Iterable[Handler | Callable[[Any], None]]) -> Emitter:
        return cls([h if isinstance(h, Handler) else Callback(h) for h in handlers])
