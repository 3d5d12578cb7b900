"""One worker process of ``ctxmodel check --jobs N``: its own target, one property at a time.

A worker's run of a property must leave no trace until the parent accepts it, because the parent may
throw it away: it is run speculatively, before the properties ahead of it have said which target
faults are already reported (``ctxmodel.parallel``). So its fixtures go to a scratch directory and
come back as text, and its example-database writes are kept in a ``BufferedDatabase`` and come back
as a list of operations, for the parent to apply once it keeps the run.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any

import attrs
from hypothesis.database import ExampleDatabase

from ctxmodel.errors import CtxmodelError, describe_exception
from ctxmodel.events import Callback, Emitter, Event, ExampleDrawn, FixtureWritten, Heartbeat, KindMet, WarningMet
from ctxmodel.gate import RunOptions, run_property
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Property
from ctxmodel.results import Outcome
from ctxmodel.targets.base import Target

__all__ = ["RECORDED_TYPES", "BufferedDatabase", "Done", "Setup", "Task", "worker_main"]

#: The events a worker records for the parent to tell when it keeps the result (a heartbeat is sent live).
RECORDED_TYPES: tuple[type[Event], ...] = (ExampleDrawn, KindMet, FixtureWritten, WarningMet)

#: ``("save", key, value)``, ``("delete", key, value)`` or ``("move", src, dest, value)``.
DatabaseOp = tuple[Any, ...]


class BufferedDatabase(ExampleDatabase):
    """Reads through to a database, keeps its own writes: a run sees what it saved, nobody else does
    until ``ops`` are applied elsewhere."""

    def __init__(self, base: ExampleDatabase | None) -> None:
        super().__init__()
        self.base = base
        self.ops: list[DatabaseOp] = []
        self._added: dict[bytes, dict[bytes, None]] = {}
        self._deleted: dict[bytes, set[bytes]] = {}

    def fetch(self, key: bytes) -> Iterable[bytes]:
        added = self._added.get(key, {})
        deleted = self._deleted.get(key, set())
        if self.base is not None:
            for value in self.base.fetch(key):
                if value not in deleted and value not in added:
                    yield value
        yield from list(added)

    def save(self, key: bytes, value: bytes) -> None:
        self.ops.append(("save", key, value))
        self._added.setdefault(key, {})[value] = None
        self._deleted.get(key, set()).discard(value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.ops.append(("delete", key, value))
        self._added.get(key, {}).pop(value, None)
        self._deleted.setdefault(key, set()).add(value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.delete(src, value)
        self.save(dest, value)
        del self.ops[-2:]
        self.ops.append(("move", src, dest, value))


def apply_ops(database: ExampleDatabase, ops: Iterable[DatabaseOp]) -> None:
    """Replay a kept run's database writes on the run's real database."""
    for op in ops:
        if op[0] == "save":
            database.save(op[1], op[2])
        elif op[0] == "delete":
            database.delete(op[1], op[2])
        else:
            database.move(op[1], op[2], op[3])


@attrs.frozen
class Setup:
    """What every property of the run shares; sent once to each worker."""

    spec: str
    timeout: float
    policies: Mapping[str, str]
    profile: Profile
    seed: int
    max_examples: int | None
    #: An ``ExampleDatabase`` (pickled: a directory one is its path), ``"default"`` or ``None``.
    database: Any
    strict: bool
    heartbeat: bool
    #: A baseline's kinds that still reproduce (``RunOptions.known_kinds``).
    known_kinds: frozenset[str] = frozenset()
    #: The names of the event types the parent's handlers want, recorded to be told when it keeps the run.
    record: tuple[str, ...] = ()
    minimize: bool = True


@attrs.frozen
class Task:
    index: int
    #: The property by id when the registry has it (a worker process imports the registry), else itself.
    prop: Property | str
    known_faults: frozenset[str]
    examples: tuple[dict[str, Any], ...] = ()
    #: Where the run writes its fixtures, made by the parent: a worker that dies or is stopped in
    #: the middle of a shrink leaves its unshrunk fixtures there for the parent to keep.
    scratch: str = ""


@attrs.frozen
class Done:
    """A finished run, not yet kept: the outcome without its property (the parent has it), fixtures
    as ``{file name: text}``, the database writes, and every finding key the run met."""

    index: int
    known_faults: frozenset[str]
    fields: dict[str, Any]
    fixtures: dict[str, str]
    database_ops: list[DatabaseOp]
    met: frozenset[str]
    #: The events ``Setup.record`` asked for, in order, each as its type's name and its fields
    #: without the property (the parent has it).
    events: list[tuple[str, dict[str, Any]]]


def _resolve(prop: Property | str) -> Property:
    if isinstance(prop, str):
        from ctxmodel.properties.registry import get

        return get(prop)
    return prop


#: The worker's target, for ``_terminate``.
_TARGETS: list[Target] = []


def _terminate(signum: int, frame: FrameType | None) -> None:
    """Close the target and leave at once, the scratch directory left for the parent. Not
    ``SystemExit``: Hypothesis takes that for a failure of the test it interrupts and would go on
    to shrink it."""
    for target in _TARGETS:
        target.close()
    os._exit(128 + signum)  # the scratch directory stays: the parent keeps what it holds


def run_task(task: Task, target: Target, setup: Setup, conn: Connection) -> Done:
    prop = _resolve(task.prop)
    met: set[str] = set()
    recorded: list[tuple[str, dict[str, Any]]] = []

    def record(event: Event) -> None:
        if isinstance(event, Heartbeat):
            conn.send(("beat", event.text))
        elif type(event).__name__ in setup.record:
            fields = attrs.asdict(event, recurse=False)
            del fields["prop"]
            recorded.append((type(event).__name__, fields))

    wanted = tuple(t for t in (*RECORDED_TYPES, Heartbeat)
                   if t.__name__ in setup.record or (t is Heartbeat and setup.heartbeat))
    database = setup.profile.database(setup.database)
    buffered = BufferedDatabase(database) if database is not None else None
    scratch = Path(task.scratch) if task.scratch else Path(tempfile.mkdtemp(prefix="ctxmodel-job-"))
    try:
        outcome = run_property(
            prop,
            target,
            policies=setup.policies,
            tokenizer=target.description.tokenizer,
            profile=setup.profile,
            fixtures_dir=scratch,
            seed=setup.seed,
            max_examples=setup.max_examples,
            database=buffered,
            examples=task.examples,
            options=RunOptions(
                strict=setup.strict,
                known_faults=task.known_faults,
                known_kinds=setup.known_kinds,
                emit=Emitter([Callback(record, frozenset(wanted))] if wanted else []),
                seen=met.add,
                minimize=setup.minimize,
            ),
        )
        fixtures = {path.name: path.read_text(encoding="utf-8") for path in outcome.fixtures}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    fields = {f.name: getattr(outcome, f.name) for f in attrs.fields(Outcome) if f.name != "prop"}
    ops = buffered.ops if buffered else []
    return Done(task.index, task.known_faults, fields, fixtures, ops, frozenset(met), recorded)


def worker_main(conn: Connection, setup: Setup) -> None:
    """Open the target once, then run what the parent sends until it sends ``None``.

    SIGINT is the parent's to handle (it was ignored when this process started); SIGTERM, the
    parent's way to stop a worker in the middle of a property, closes the target first.
    """
    from ctxmodel.targets.spec import open_target

    signal.signal(signal.SIGTERM, _terminate)
    target: Target | None = None
    failure = ""
    try:
        target = open_target(setup.spec, timeout=setup.timeout)
        _TARGETS.append(target)
    except CtxmodelError as exc:
        failure = f"the worker could not open the target: {exc}"
    try:
        while True:
            task = conn.recv()
            if task is None:
                return
            if target is None:
                conn.send(("failed", task.index, failure))
                continue
            try:
                done = run_task(task, target, setup, conn)
            except Exception as exc:  # a bug in a strategy or a check the engine did not catch
                conn.send(("failed", task.index, f"the worker could not run it: {describe_exception(exc)}"))
                continue
            conn.send(("done", done))
    except (EOFError, BrokenPipeError):
        return  # the parent is gone
    finally:
        if target is not None:
            target.close()
