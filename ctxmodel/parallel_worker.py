"""One worker process of the engine: its own target, one task at a time.

A task is one property's run for ``ctxmodel check --jobs N`` (``ctxmodel.parallel``), or one slice
of a fuzz campaign (``ctxmodel.fuzz.campaign``): a property, or the stateful agent loop, for a few
examples at the slice's own seed. A property's run for ``check`` must leave no trace until the
parent accepts it, because the parent may throw it away: it is run speculatively, before the
properties ahead of it have said which target faults are already reported. So its fixtures go to a
scratch directory and come back as text, and its example-database writes are kept in a
``BufferedDatabase`` and come back as a list of operations, for the parent to apply once it keeps
the run. A slice's database writes are made at once (every worker of a campaign replays what any
of them found), and it tells the parent as it goes how many examples it judged and which labels
(``event()`` and the input's features) they reached.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any

import attrs
from hypothesis.database import ExampleDatabase

from ctxmodel.errors import CtxmodelError, describe_exception
from ctxmodel.events import Callback, Emitter, Event, ExampleDrawn, FixtureWritten, Heartbeat, KindMet, WarningMet
from ctxmodel.gate import Cut, run_property
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Property
from ctxmodel.results import Outcome
from ctxmodel.runs import RunConfig, RunOptions
from ctxmodel.targets.base import Target

__all__ = [
    "AGENT_LOOP_ID",
    "OPEN_FAILED",
    "RECORDED_TYPES",
    "BufferedDatabase",
    "Done",
    "Setup",
    "Slice",
    "Task",
    "worker_main",
]

#: The events a worker records for the parent to tell when it keeps the result (a heartbeat is sent live).
RECORDED_TYPES: tuple[type[Event], ...] = (ExampleDrawn, KindMet, FixtureWritten, WarningMet)

#: The stateful agent loop's id among a campaign's units (a task kind, not a registered property).
AGENT_LOOP_ID = "agent-loop"
#: How a worker's ``failed`` message begins when it could not open its target (no task can run there).
OPEN_FAILED = "the worker could not open the target"
#: Seconds between two tallies a slice sends its parent.
TALLY_EVERY = 0.5

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
    #: A campaign's ``--db`` value, opened once by each worker for every slice (``database`` unused).
    database_spec: str | None = None


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
    #: Run as one slice of a campaign (its seed, budget and the kinds the campaign holds), not as
    #: the property's whole run for ``check``.
    slice: Slice | None = None


@attrs.frozen
class Slice:
    """A few examples of one campaign unit: a property, or the agent loop (``prop`` is then
    ``AGENT_LOOP_ID``)."""

    seed: int
    max_examples: int
    #: Kinds the campaign holds: met, they are noted and neither raised nor shrunk.
    known_kinds: frozenset[str]
    #: Wall-clock time after which the search ends (what it met is still shrunk), or ``None``.
    search_until: float | None = None
    #: Wall-clock time at which the slice stops even in the middle of a shrink, or ``None``.
    stop_at: float | None = None


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
    #: The agent loop's step sequence leading to each kind it met, by kind.
    steps: dict[str, tuple[str, ...]] = attrs.field(factory=dict)


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


class _Tally:
    """A slice's examples and labels, sent to the parent every ``TALLY_EVERY`` seconds and at its end."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.examples = 0
        self.labels: dict[str, int] = {}
        self.sent = time.monotonic()

    def saw(self, labels: Iterable[str]) -> None:
        self.examples += 1
        for label in labels:
            self.labels[label] = self.labels.get(label, 0) + 1
        if time.monotonic() - self.sent >= TALLY_EVERY:
            self.flush()

    def flush(self) -> None:
        if self.examples or self.labels:
            self.conn.send(("tally", self.examples, self.labels))
        self.examples, self.labels, self.sent = 0, {}, time.monotonic()


def _labels(params: Any) -> set[str]:
    from ctxmodel.fuzz.features import features_of
    from ctxmodel.hypothesis_hooks import example_events

    return features_of(params) | example_events()


def _monotonic(wall: float | None) -> float | None:
    return None if wall is None else time.monotonic() + (wall - time.time())


def _stop_search(piece: Slice, stop: Any) -> Callable[[], bool]:
    def ended() -> bool:
        return (stop is not None and stop.is_set()) or (
            piece.search_until is not None and time.time() >= piece.search_until
        )

    return ended


_DATABASES: dict[str, ExampleDatabase] = {}


def _campaign_database(spec: str, known: frozenset[str]) -> ExampleDatabase:
    """The campaign's database, opened once per worker; seen through ``KeepingDatabase`` once the
    campaign holds kinds (a stored input of a known kind no longer fails, and must not be deleted)."""
    from ctxmodel.fuzz.database import KeepingDatabase, open_database

    if spec not in _DATABASES:
        _DATABASES[spec] = open_database(spec)
    return KeepingDatabase(_DATABASES[spec]) if known else _DATABASES[spec]


def run_task(task: Task, target: Target, setup: Setup, conn: Connection, stop: Any = None) -> Done:
    if task.slice is not None and task.prop == AGENT_LOOP_ID:
        return _run_loop(task, task.slice, target, setup, conn, stop)
    prop = _resolve(task.prop)
    piece = task.slice
    met: set[str] = set()
    recorded: list[tuple[str, dict[str, Any]]] = []
    tally = _Tally(conn) if piece is not None else None

    def record(event: Event) -> None:
        if isinstance(event, Heartbeat):
            conn.send(("beat", event.text))
        elif isinstance(event, ExampleDrawn) and tally is not None:
            tally.saw(_labels(event.params))
        if type(event).__name__ in setup.record:
            fields = attrs.asdict(event, recurse=False)
            del fields["prop"]
            recorded.append((type(event).__name__, fields))

    wanted = tuple(t for t in (*RECORDED_TYPES, Heartbeat)
                   if t.__name__ in setup.record or (t is Heartbeat and setup.heartbeat)
                   or (t is ExampleDrawn and tally is not None))
    buffered: BufferedDatabase | None = None
    database: Any
    if piece is not None and setup.database_spec is not None:
        database = _campaign_database(setup.database_spec, piece.known_kinds)
    else:
        base = setup.profile.database(setup.database)
        database = buffered = BufferedDatabase(base) if base is not None else None
    scratch = Path(task.scratch) if task.scratch else Path(tempfile.mkdtemp(prefix="ctxmodel-job-"))
    try:
        config = RunConfig(
            profile=setup.profile, policies=setup.policies, fixtures_dir=scratch,
            seed=setup.seed if piece is None else piece.seed,
            max_examples=setup.max_examples if piece is None else piece.max_examples,
            database=database, regressions={prop.id: task.examples},
        )  # fmt: skip
        outcome = run_property(
            prop,
            target,
            config,
            RunOptions(
                strict=setup.strict,
                known_faults=task.known_faults,
                known_kinds=setup.known_kinds | (piece.known_kinds if piece is not None else frozenset()),
                emit=Emitter([Callback(record, frozenset(wanted))] if wanted else []),
                seen=met.add,
                minimize=setup.minimize,
                stop_at=None if piece is None else _monotonic(piece.stop_at),
                stop_search=None if piece is None else _stop_search(piece, stop),
            ),
        )
        if tally is not None:
            tally.flush()
        fixtures = {path.name: path.read_text(encoding="utf-8") for path in outcome.fixtures}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    fields = {f.name: getattr(outcome, f.name) for f in attrs.fields(Outcome) if f.name != "prop"}
    ops = buffered.ops if buffered else []
    return Done(task.index, task.known_faults, fields, fixtures, ops, frozenset(met), recorded)


class _LoopWatch:
    """The agent loop's per-run hook: each run is one example, counted and labelled; a stop
    request ends the slice before a run (``gate.Cut``) unless a run has failed, whose shrink goes on
    to the slice's hard stop."""

    def __init__(self, tally: _Tally, piece: Slice, stop: Any) -> None:
        self.tally = tally
        self.stop_search = _stop_search(piece, stop)
        self.stop_at = piece.stop_at
        self.failing = False

    def begin(self) -> None:
        if self.stop_at is not None and time.time() >= self.stop_at:
            raise Cut("the campaign's time is up")
        if not self.failing and self.stop_search():
            raise Cut("stopped")

    def saw(self, labels: set[str]) -> None:
        self.tally.saw(labels)

    def failed(self) -> None:
        self.failing = True


def _run_loop(task: Task, piece: Slice, target: Target, setup: Setup, conn: Connection, stop: Any) -> Done:
    from ctxmodel.fuzz.agent_loop import run_loop_slice

    tally = _Tally(conn)
    database = None if setup.database_spec is None else _campaign_database(setup.database_spec, piece.known_kinds)
    scratch = Path(task.scratch) if task.scratch else Path(tempfile.mkdtemp(prefix="ctxmodel-job-"))
    try:
        loop = run_loop_slice(
            target, policies=setup.policies, tokenizer=target.description.tokenizer,
            settings=setup.profile.hypothesis_settings(max_examples=piece.max_examples, database=database),
            seed=piece.seed, fixtures_dir=scratch, watch=_LoopWatch(tally, piece, stop),
            known_kinds=piece.known_kinds,
        )  # fmt: skip
        tally.flush()
        kinds = tuple(kind for kind, _ in loop.found)
        fixtures = {k.fixture.name: k.fixture.read_text(encoding="utf-8") for k in kinds if k.fixture is not None}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    fields = {"status": "failed" if kinds else "passed", "examples": loop.examples, "kinds": kinds}
    steps = {kind.key: steps for kind, steps in loop.found}
    return Done(task.index, task.known_faults, fields, fixtures, [], frozenset(), [], steps)


def worker_main(conn: Connection, setup: Setup, stop: Any = None) -> None:
    """Open the target once, then run what the parent sends until it sends ``None``.

    SIGINT is the parent's to handle (it was ignored when this process started); SIGTERM, the
    parent's way to stop a worker in the middle of a task, closes the target first. ``stop`` (a
    campaign's) ends every slice's search when set.
    """
    from ctxmodel.targets.spec import open_target

    signal.signal(signal.SIGTERM, _terminate)
    target: Target | None = None
    failure = ""
    try:
        target = open_target(setup.spec, timeout=setup.timeout)
        _TARGETS.append(target)
    except CtxmodelError as exc:
        failure = f"{OPEN_FAILED}: {exc}"
    try:
        while True:
            task = conn.recv()
            if task is None:
                return
            if target is None:
                conn.send(("failed", task.index, failure))
                continue
            try:
                done = run_task(task, target, setup, conn, stop)
            except Exception as exc:  # a bug in a strategy or a check the engine did not catch
                conn.send(("failed", task.index, f"the worker could not run it: {describe_exception(exc)}"))
                continue
            conn.send(("done", done))
    except (EOFError, BrokenPipeError):
        return  # the parent is gone
    finally:
        if target is not None:
            target.close()
