"""The fuzz campaign: a scheduler of the engine's worker processes, handing each one slice at a time.

Why this shape (what long Hypothesis campaigns need: seeds, not xdist; time where new events still come):

- Parallelism is by seed, never xdist: a slice is one unit (a property, or the stateful agent loop)
  for a few examples at its own seed, run by one of the engine's workers (``ctxmodel.pool``,
  ``ctxmodel.parallel_worker``: the same processes, task protocol and property runner as
  ``check --jobs N``), all on one shared example database, so what any slice finds every later one
  replays first.
- Round-robin with more time for the units still finding new labels: a slice that met a label (a
  Hypothesis ``event()`` or one of the input's domain features) its unit had not seen, or a new
  kind, doubles the unit's next slice; a slice that met nothing new halves it.
- A failure is a kind, as in ``ctxmodel check`` (``results.finding_key``). Each slice is told the
  kinds the campaign holds (``RunOptions.known_kinds``: met, noted, neither raised nor shrunk), so a
  unit keeps running after it failed and looks for the kinds nobody has met. Only this process
  writes fixtures: the first slice to bring a kind back has its fixture written, atomically, and
  the kind kept; another slice bringing the same kind is dropped.
- What a campaign shows or shares is a handler of its events (``ctxmodel.fuzz.events``): the live
  progress, the report rewritten at every kind, a Redis campaign's counts and timeline. Its figures
  are the ledger's (``ctxmodel.fuzz.ledger``); its exit code follows ``check``'s rules.
- Stops: the time limit, the examples budget, SIGINT or SIGTERM. A stop ends every slice's search
  at once (a shared event the workers read between examples); a slice that met a kind goes on
  shrinking it within the grace period, then what is left is terminated and the unshrunk fixture
  each worker wrote the moment it met a kind is kept (``pool.salvage``). A second signal stops at
  once; the report is still written.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from multiprocessing import get_context
from multiprocessing.connection import wait
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import attrs

from ctxmodel.errors import CtxmodelError, TargetError, UsageError
from ctxmodel.events import Emitter, Handler
from ctxmodel.fixtures import write_atomic
from ctxmodel.fuzz.database import DEFAULT_DB, check_database, describe_database
from ctxmodel.fuzz.events import (
    CampaignFinished,
    CampaignNote,
    CampaignStarted,
    CampaignTick,
    KindKept,
    SliceTallied,
    UnitFailed,
)
from ctxmodel.fuzz.ledger import Ledger, UnitSpec, record_of
from ctxmodel.fuzz.progress import Progress
from ctxmodel.fuzz.report import ReportWriter
from ctxmodel.fuzz.results import CampaignResult, FailureRecord
from ctxmodel.parallel_worker import AGENT_LOOP_ID, OPEN_FAILED, Done, Setup, Slice, Task
from ctxmodel.pool import Worker, start_worker, stop_workers
from ctxmodel.profiles import Profile
from ctxmodel.results import Kind

__all__ = [
    "AGENT_LOOP_ID",
    "CampaignConfig",
    "UnitSpec",
    "plan_units",
    "run_campaign",
]

#: Slice sizes: the first one, and the bounds the scheduler keeps within.
SLICE_START, SLICE_MIN, SLICE_MAX = 20, 5, 400
#: Agent-loop slices are counted in runs of the machine, each many steps long.
LOOP_SLICE_START, LOOP_SLICE_MIN, LOOP_SLICE_MAX = 5, 2, 50
#: Seconds between two ticks (the progress display, the timeline, a Redis campaign's exchange).
TICK_EVERY = 0.5


@attrs.frozen
class CampaignConfig:
    target_spec: str
    #: Wall-clock budget in seconds; ``None`` with ``max_examples`` set runs to that budget.
    duration: float | None = None
    #: Examples per unit across all workers.
    max_examples: int | None = None
    workers: int = 1
    database: str = DEFAULT_DB
    fixtures_dir: str = "ctxmodel-fixtures"
    report_dir: str | None = ".ctxmodel/report"
    property_ids: tuple[str, ...] = ()
    policies: Mapping[str, str] = attrs.field(factory=dict)
    seed: int | None = None
    timeout: float = 10.0
    #: Run the stateful agent-loop model as one more unit (only when the target has ``recover``).
    agent_loop: bool = True
    #: Seconds a slice gets after a stop request to finish shrinking what it met.
    grace: float = 10.0
    #: The name of a campaign kept in the Redis ``database``, which other machines may join.
    campaign: str | None = None


def derive_seed(*parts: object) -> int:
    """Independent, reproducible streams from the one printed campaign seed."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_units(ops: frozenset[str], property_ids: Sequence[str], *, agent_loop: bool) -> list[UnitSpec]:
    """The properties selected (by id or prefix), plus the agent loop when asked for and applicable."""
    from ctxmodel.properties.registry import select

    ids = list(property_ids)
    units: list[UnitSpec] = []
    for prop in select(ids):
        missing = sorted(set(prop.requires) - set(ops))
        units.append(
            UnitSpec(
                prop.id, prop.op, prop.clause, prop.summary, f"target has no {', '.join(missing)}" if missing else None
            )
        )
    loop_wanted = agent_loop and (not ids or any(AGENT_LOOP_ID.startswith(i.rstrip("*.")) for i in ids))
    if loop_wanted:
        from ctxmodel.fuzz.agent_loop import CLAUSE, REQUIRES, SUMMARY

        missing = sorted(REQUIRES - ops)
        units.append(
            UnitSpec(
                AGENT_LOOP_ID, "recover", CLAUSE, SUMMARY, f"target has no {', '.join(missing)}" if missing else None
            )
        )
    if not units:
        raise UsageError("no property matches --property")
    return units


#: Every phase but ``target``: a slice is a short run (``profiles._SHORT_RUN_PHASES``), and on a
#: property that fails in several ways the hill-climbing with the example database never ended (a
#: 20-example slice on tests/targets/three_bugs.py ran for minutes; 30 s without it).
def _slice_profile() -> Profile:
    from hypothesis import Phase

    phases = tuple(p for p in Phase if p is not Phase.target)
    return Profile("fuzz", max_examples=SLICE_START, deterministic=False, use_database=True, phases=phases)


@attrs.define
class _Unit:
    """The scheduler's own state of one unit: how big its next slice is and what it has seen."""

    spec: UnitSpec
    size: int
    lo: int
    hi: int
    rounds: int = 0
    #: Examples its finished slices judged, and those handed out and not back yet.
    done: int = 0
    flying: int = 0
    seen: set[str] = attrs.field(factory=set)
    retired: bool = False


@attrs.define
class _Running:
    unit: _Unit
    size: int
    #: The worker's number (its place among the workers when it was handed the slice).
    worker: int
    #: Labels the slice met that its unit had not seen before.
    new_labels: int = 0


@attrs.define
class _Scheduler:
    config: CampaignConfig
    ledger: Ledger
    emit: Emitter
    claim: Callable[[FailureRecord, dict[str, Any] | None], bool]
    context: Any
    setup: Setup
    stop: Any
    units: list[_Unit]
    workers: list[Worker] = attrs.field(factory=list)
    running: dict[int, _Running] = attrs.field(factory=dict)
    next_task: int = 0
    turn: int = 0
    #: ``time.monotonic()`` of the stop request.
    stop_at: float | None = None

    # -- handing out --------------------------------------------------------------------------

    def request_stop(self, why: str) -> None:
        if self.stop_at is None:
            self.stop_at = time.monotonic()
            self.ledger.stopped = why
            self.stop.set()

    def _budget_left(self, unit: _Unit) -> int | None:
        budget = self.config.max_examples
        return None if budget is None else budget - unit.done - unit.flying

    def _next_unit(self) -> _Unit | None:
        live = [u for u in self.units if not u.retired]
        for step in range(len(live)):
            unit = live[(self.turn + step) % len(live)]
            left = self._budget_left(unit)
            if left is None or left > 0:
                self.turn = (self.turn + step + 1) % len(live)
                return unit
        return None

    def hand_out(self, worker: Worker, deadline: float | None) -> bool:
        unit = self._next_unit()
        if unit is None or self.stop_at is not None:
            return False
        left = self._budget_left(unit)
        size = unit.size if left is None else max(1, min(unit.size, left))
        seed = derive_seed(self.ledger.seed, unit.spec.id, unit.rounds)
        unit.rounds += 1
        piece = Slice(seed, size, frozenset(self.ledger.known), search_until=deadline,
                      stop_at=None if deadline is None else deadline + self.config.grace / 2)
        scratch = Path(tempfile.mkdtemp(prefix="ctxmodel-fuzz-"))
        index, self.next_task = self.next_task, self.next_task + 1
        try:
            worker.conn.send(Task(index, unit.spec.id, frozenset(), (), str(scratch), piece))
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
            return False
        worker.busy, worker.scratch = index, scratch
        unit.flying += size
        self.running[index] = _Running(unit, size, self.workers.index(worker))
        return True

    # -- what comes back ----------------------------------------------------------------------

    def receive(self, worker: Worker) -> None:
        index = worker.busy
        assert index is not None
        run = self.running[index]
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker, run, f"its worker process ended (exit code {worker.proc.exitcode})")
            return
        if message[0] == "tally":
            _, examples, labels = message
            fresh = set(labels) - run.unit.seen
            run.unit.seen |= fresh
            run.new_labels += len(fresh)
            self.ledger.tally(run.unit.spec.id, examples, labels)
            self.emit(SliceTallied(run.unit.spec.id, examples, labels))
            return
        if message[0] == "beat":
            return
        self._settle(worker, index)
        if message[0] == "failed":
            text = message[2]
            if text.startswith(OPEN_FAILED):
                if text not in self.ledger.fatal:
                    self.ledger.fatal.append(text)
                    self.emit(CampaignNote(text))
                self._retire_worker(worker)
            else:
                self._retire(run.unit, text)
            return
        done: Done = message[1]
        fields = done.fields
        examples = int(fields.get("examples", 0))
        before, run.unit.done = run.unit.done, run.unit.done + examples
        if fields["status"] == "error":
            self._retire(run.unit, str(fields.get("reason", "")))
            return
        shrunk = not fields.get("flaky", False) and not fields.get("cut", "")
        kept = 0
        for kind in fields.get("kinds", ()):
            text = done.fixtures.get(kind.fixture.name) if kind.fixture is not None else None
            kept += self._keep(run, kind, None if text is None else json.loads(text), shrunk,
                               done.steps.get(kind.key, ()), before=before)
        grew = bool(kept) or run.new_labels > 0
        unit = run.unit
        unit.size = min(unit.hi, unit.size * 2) if grew else max(unit.lo, unit.size // 2)
        if not examples and not kept and self.stop_at is None and fields["status"] != "cut":
            unit.retired = True  # Hypothesis has nothing left to draw for it

    def _keep(self, run: _Running, kind: Kind, fixture: dict[str, Any] | None, shrunk: bool,
              steps: Sequence[str], before: int) -> bool:
        """The first slice to bring a kind back: its fixture written under its final name, the kind
        kept and told. A kind the campaign holds already (another slice or machine met it first) is
        dropped, fixture and all."""
        if kind.key in self.ledger.known:
            return False
        unit = run.unit
        final = None if fixture is None or kind.fixture is None else Path(self.config.fixtures_dir) / kind.fixture.name
        record = record_of(
            attrs.evolve(kind, fixture=final), unit.spec, unit.spec.op, worker=run.worker,
            found_at=time.time() - self.ledger.started_wall, examples_until=before + kind.first_example,
            shrunk=shrunk, steps=steps,
        )  # fmt: skip
        self.ledger.known.add(kind.key)
        if not self.claim(record, fixture):
            self.emit(CampaignNote(f"met by another machine: {kind.key}"))
            return False
        if final is not None and fixture is not None:
            write_atomic(final, fixture)
        self.ledger.states[unit.spec.id].failures += 1
        self.ledger.failures.append(record)
        self.emit(KindKept(record))
        return True

    def _settle(self, worker: Worker, index: int) -> None:
        run = self.running.pop(index)
        run.unit.flying -= run.size
        worker.busy = None
        if worker.scratch is not None:
            shutil.rmtree(worker.scratch, ignore_errors=True)
            worker.scratch = None

    def _retire(self, unit: _Unit, text: str) -> None:
        unit.retired = True
        state = self.ledger.states[unit.spec.id]
        if state.error is None:
            state.error = text
            self.emit(CampaignNote(f"ERROR {unit.spec.id}: {text}"))
            self.emit(UnitFailed(unit.spec.id, text))

    def _retire_worker(self, worker: Worker) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
            stop_workers([worker])

    def _lost(self, worker: Worker, run: _Running, why: str) -> None:
        """A worker that ended in the middle of a slice: the fixture of each kind it had met is
        kept (not shrunk), and its unit retired; a new worker takes its place."""
        worker.proc.join(timeout=5)
        self.salvage(worker, run)
        index = worker.busy
        assert index is not None
        self._settle(worker, index)
        self.workers.remove(worker)
        worker.conn.close()
        if self.stop_at is None:
            self._retire(run.unit, why)
            self.workers.append(start_worker(self.context, self.setup, self.stop))

    def salvage(self, worker: Worker, run: _Running) -> None:
        """Each kind's fixture a stopped worker had written as it met it, kept if it is new."""
        from ctxmodel.fixtures import load_fixture
        from ctxmodel.properties.catalogue import Finding

        scratch = worker.scratch
        if scratch is None:
            return
        for path in sorted(scratch.glob("*.json")):
            try:
                fixture = load_fixture(path)
            except (OSError, ValueError, CtxmodelError):
                continue  # one the worker was still writing when it ended
            note = (fixture.note or fixture.property).splitlines()[0]
            kind = Kind(fixture.kind or fixture.property, Finding("fail", note), dict(fixture.params), (), 0,
                        fixture=Path(path.name))
            self._keep(run, kind, fixture.to_json(), False, (), before=run.unit.done)

    # -- the loop -----------------------------------------------------------------------------

    def run(self, signals: list[int], deadline: float | None) -> None:
        next_tick = 0.0
        mono0 = time.monotonic()
        for _ in range(self.config.workers):
            self.workers.append(start_worker(self.context, self.setup, self.stop))
        while True:
            now = time.monotonic()
            if signals:
                self.request_stop("interrupted")
                if len(signals) > 1:
                    break
            if deadline is not None and time.time() >= deadline:
                self.request_stop("time-limit")
            if self.stop_at is not None and now - self.stop_at >= self.config.grace:
                break
            if now - mono0 >= next_tick:
                next_tick = now - mono0 + TICK_EVERY
                wall = time.time()
                self.ledger.timeline.append((wall - self.ledger.started_wall, self.ledger.examples(),
                                             len(self.ledger.failures)))
                self.emit(CampaignTick(wall, self.ledger.result(wall)))
            for worker in list(self.workers):
                if worker.busy is None and not self.hand_out(worker, deadline):
                    break
            busy = [w for w in self.workers if w.busy is not None]
            if not busy:
                if self.stop_at is None:
                    self.ledger.stopped = self._why_done()
                break
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=0.1)
            for worker in busy:
                if worker.conn in ready or worker.proc.sentinel in ready:
                    self.receive(worker)

    def _why_done(self) -> str:
        """Nothing runs and nothing can be handed out: why."""
        if not self.workers:
            return "error"
        states = self.ledger.states
        if all(states[u.spec.id].error for u in self.units):
            return "exhausted"
        return "max-examples" if self.config.max_examples is not None else "exhausted"

    def close(self) -> None:
        """Stop what is still running, keeping each stopped slice's unshrunk fixtures."""
        busy = [(w, self.running.get(w.busy)) for w in self.workers if w.busy is not None]
        for worker in self.workers:
            if worker.busy is not None:
                worker.proc.terminate()
        for worker, run in busy:
            worker.proc.join(timeout=10)
            if run is not None:
                self.salvage(worker, run)
        stop_workers(self.workers)
        for worker in self.workers:
            if worker.scratch is not None:
                shutil.rmtree(worker.scratch, ignore_errors=True)


def _describe_target(config: CampaignConfig) -> tuple[dict[str, Any], dict[str, str], frozenset[str]]:
    """Open the target once in this process: a target that cannot start is exit 3 before any worker
    is spawned (contract §9), and the declared policies are resolved once for everyone."""
    from ctxmodel.policies import resolve
    from ctxmodel.targets.spec import open_target, parse_spec

    spec = parse_spec(config.target_spec)
    target = open_target(spec, timeout=config.timeout)
    try:
        desc = target.description
        policies = resolve(desc.policies, config.policies)
        info = {"spec": str(spec), "name": desc.name, "version": desc.version, "tokenizer": desc.tokenizer}
        return info, policies, frozenset(desc.ops)
    finally:
        target.close()


def run_campaign(config: CampaignConfig, *, out: TextIO | None = None, tty: bool | None = None,
                 handlers: Sequence[Handler] = ()) -> CampaignResult:
    """Run one campaign to its end and return what it found; the report (if asked for) is written.
    With ``config.campaign`` the run joins that Redis campaign and returns (and reports) all of it.
    ``handlers`` get every event besides the progress display, the report and Redis.

    Raises ``UsageError`` (exit 2) for a bad configuration and ``TargetError`` (exit 3) when the
    target cannot be started; everything after that is in the result.
    """
    if config.workers < 1:
        raise UsageError("--workers: expected at least 1")
    if config.duration is None and config.max_examples is None:
        raise UsageError("give --duration or --max-examples (a campaign needs an end)")
    if config.campaign is not None:
        from ctxmodel.fuzz.shared_campaign import check_name

        check_name(config.campaign, config.database)
    check_database(config.database)
    target_info, policies, ops = _describe_target(config)
    units = plan_units(ops, config.property_ids, agent_loop=config.agent_loop)
    seed = config.seed if config.seed is not None else random.getrandbits(32)
    stream = out if out is not None else sys.stderr
    started = time.time()
    ledger = Ledger(target_info, policies, describe_database(config.database), config.workers, seed, started, units)
    emit = Emitter([])
    shared = None
    if config.campaign is not None:
        from ctxmodel.fuzz.shared_sync import SharedSync

        shared = SharedSync.join(config.database, config.campaign, ledger, emit, config.fixtures_dir)
    result_now: Callable[[float], CampaignResult] = ledger.result if shared is None else shared.result
    progress = Progress(stream, tty=stream.isatty() if tty is None else tty, report_dir=config.report_dir)
    reporter = None if not config.report_dir else ReportWriter(config.report_dir, result_now)
    emit.handlers = [h for h in (progress, reporter, shared) if h is not None] + list(handlers)
    Path(config.fixtures_dir).mkdir(parents=True, exist_ok=True)
    context = get_context("spawn")
    stop = context.Event()
    setup = Setup(config.target_spec, config.timeout, dict(policies), _slice_profile(), seed, None, None, False,
                  False, database_spec=config.database)
    scheduler = _Scheduler(
        config, ledger, emit, (lambda r, f: True) if shared is None else shared.claim, context, setup, stop,
        [_Unit(u, *_sizes(u)) for u in units if u.skipped is None],
    )  # fmt: skip
    signals: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        signals.append(signum)

    old_handlers = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    emit(CampaignStarted(ledger))
    deadline = None if config.duration is None else started + config.duration
    try:
        scheduler.run(signals, deadline)
    finally:
        try:
            scheduler.close()
        finally:
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
    if ledger.stopped == "running":
        ledger.stopped = "stopped"
    if ledger.fatal and not ledger.examples() and not ledger.failures:
        raise TargetError(ledger.fatal[0].removeprefix(OPEN_FAILED + ": "))
    now = time.time()
    if shared is not None:
        shared.sync(now, final=True)
    result = result_now(now)
    emit(CampaignFinished(now, result))
    return result


def _sizes(unit: UnitSpec) -> tuple[int, int, int]:
    if unit.id == AGENT_LOOP_ID:
        return LOOP_SLICE_START, LOOP_SLICE_MIN, LOOP_SLICE_MAX
    return SLICE_START, SLICE_MIN, SLICE_MAX


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)
