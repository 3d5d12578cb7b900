"""The engine's scheduler over N worker processes (``ctxmodel check --jobs N``): the verdicts,
fixtures, events and summary of the same run in one process (``engine.run``) at the same seed.

Each property already draws from its own seed (``gate.property_seed``), so what it generates does
not depend on the process that runs it or on what ran before. The one thing a property takes from
the properties ahead of it is the set of target faults they reported (``RunOptions.known_faults``):
it rejects those inputs rather than report the fault again. A worker starts a property before the
ones ahead of it have finished, knowing only the faults kept so far (a subset of the true set). The
parent keeps the result only if the run met none of the faults it was not told of, since knowing
them would then have changed nothing; otherwise the property runs again, told all of them. Results
are kept in property order, and only then are their fixtures written, their example-database writes
applied, their events told (each worker records them) and ``--max-failures`` counted, as in one
process.

Each worker opens its own target from the spec string (``exec:`` and ``python:`` targets are one
process per worker). A target whose answers depend on state left by earlier requests can answer
differently than in one process, where it saw every property's requests in order; contract §1
requires of every target that they do not. ``--deadline`` is checked when a property is handed to
a worker, so up to N properties that started before it still finish.
"""

from __future__ import annotations

import json
import pickle
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from multiprocessing import get_context
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.events import (
    Emitter,
    Event,
    Heartbeat,
    PropertyStarted,
)
from ctxmodel.fixtures import write_atomic
from ctxmodel.parallel_worker import RECORDED_TYPES, Done, Setup, Task, apply_ops
from ctxmodel.pool import Worker, kept_note, salvage, start_worker, stop_workers
from ctxmodel.properties.catalogue import Property
from ctxmodel.results import GateReport, Kind, Outcome
from ctxmodel.runs import RunConfig, faulting_target, past_deadline, tell_finished, too_many_failures

__all__ = ["run_parallel"]


def _ship(prop: Property) -> Property | str:
    """The property itself (a worker's registry lacks one registered at run time, as tests do), or
    its id when it cannot be pickled (a check built in a closure), for the worker's registry."""
    try:
        pickle.dumps(prop)
    except (pickle.PicklingError, AttributeError, TypeError):
        return prop.id
    return prop


def _kept(prop: Property, done: Done, fixtures_dir: Path) -> tuple[Outcome, dict[str, Path]]:
    """The worker's outcome with its fixtures written where the run writes them, and where each went."""
    final = {name: write_atomic(fixtures_dir / name, json.loads(text)) for name, text in done.fixtures.items()}

    def moved(kinds: tuple[Kind, ...]) -> tuple[Kind, ...]:
        return tuple(
            attrs.evolve(k, fixture=final[k.fixture.name]) if k.fixture is not None else k for k in kinds
        )

    fields = dict(done.fields)
    fields["kinds"] = moved(fields["kinds"])
    fields["warned"] = moved(fields["warned"])
    return Outcome(prop, **fields), final


def _retold(prop: Property, recorded: Sequence[tuple[str, dict[str, Any]]], final: Mapping[str, Path]) -> list[Event]:
    """A worker's recorded events, with the property and the kept fixtures' paths put back."""
    types: dict[str, Any] = {t.__name__: t for t in RECORDED_TYPES}
    events: list[Event] = []
    for name, fields in recorded:
        fields = dict(fields)
        if name == "FixtureWritten":
            path = final.get(fields["path"].name)
            if path is None:  # a fixture the minimizer replaced: its file is gone
                continue
            fields["path"] = path
        if name == "WarningMet" and fields["kind"].fixture is not None:
            fields["kind"] = attrs.evolve(fields["kind"], fixture=final.get(fields["kind"].fixture.name))
        events.append(types[name](prop=prop, **fields))
    return events


def run_parallel(props: Sequence[Property], config: RunConfig, emit: Emitter) -> GateReport:
    """The engine's run over ``config.jobs`` worker processes, each opening ``config.target_spec``
    with ``config.timeout``. The events of a property are told when its result is kept."""
    assert config.seed is not None and config.target_spec is not None
    run_seed = config.seed
    profile = config.profile
    max_failures, baseline_kinds, deadline = config.max_failures, config.baseline_kinds, config.deadline
    recorded = tuple(t.__name__ for t in RECORDED_TYPES if emit.wants(t))
    setup = Setup(
        config.target_spec, config.timeout, dict(config.policies), profile, run_seed, config.max_examples,
        config.database, config.strict, emit.wants(Heartbeat), known_kinds=config.known_kinds, record=recorded,
        minimize=config.minimize,
    )
    real_database = profile.database(config.database)
    context = get_context("spawn")
    started = time.monotonic()
    total = len(props)
    outcomes: list[Outcome] = []
    known: set[str] = set()
    finished: dict[int, Done | str] = {}
    waiting = deque(range(total))
    again: deque[tuple[int, frozenset[str]]] = deque()
    stopped = ""
    #: The first property no worker was given because the deadline had passed, and why.
    cut, cut_reason = total, ""
    workers: list[Worker] = []
    #: The unshrunk fixtures of the properties whose workers were stopped in the middle of them.
    salvaged: dict[int, list[Path]] = {}

    def keep(index: int, *, final: bool) -> bool:
        """Settle property ``index`` as one process would have; False while its result must be
        waited for or run again. ``final``: the run is over, a property not settled is never-run."""
        nonlocal stopped
        prop = props[index]
        reason = (too_many_failures(outcomes, max_failures, baseline_kinds) or faulting_target(outcomes)
                  or (cut_reason if index >= cut else ""))
        if reason:
            stopped = stopped or reason
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            return True
        result = finished.pop(index, None)
        if isinstance(result, Done) and not (result.met & known) <= result.known_faults:
            result = None  # it met a fault reported ahead of it that it was not told of
            if not final:
                again.append((index, frozenset(known)))
                return False
        if result is None:
            if not final:
                return False
            reason = (stopped or "not reached") + kept_note(salvaged.get(index, ()))
            outcomes.append(Outcome(prop, "never-run", reason=reason))
            return True
        emit(PropertyStarted(prop))
        if isinstance(result, str):
            outcome = Outcome(prop, "error", reason=result)
        else:
            if real_database is not None:
                apply_ops(real_database, result.database_ops)
            outcome, written = _kept(prop, result, config.fixtures_dir)
            for event in _retold(prop, result.events, written):
                emit(event)
        tell_finished(emit, known, outcome)
        outcomes.append(outcome)
        return True

    def hand_out(worker: Worker) -> None:
        nonlocal cut, cut_reason
        if again:
            index, faults = again.popleft()  # it started before any deadline: it finishes
        elif waiting:
            reason = past_deadline(started, deadline)
            if reason:
                cut, cut_reason = waiting[0], reason
                waiting.clear()
                return
            index, faults = waiting.popleft(), frozenset(known)
        else:
            return
        prop = props[index]
        scratch = Path(tempfile.mkdtemp(prefix="ctxmodel-job-"))
        task = Task(index, _ship(prop), faults, tuple(config.regressions.get(prop.id, ())), str(scratch))
        try:
            worker.conn.send(task)
        except OSError:  # the worker died while idle: the property waits for another one
            shutil.rmtree(scratch, ignore_errors=True)
            again.appendleft((index, faults))
            workers.remove(worker)
            worker.conn.close()
            return
        worker.busy, worker.scratch = index, scratch

    def receive(worker: Worker) -> None:
        index = worker.busy
        assert index is not None
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            worker.proc.join(timeout=5)
            kept = salvage(worker, config.fixtures_dir)
            finished[index] = f"its worker process ended (exit code {worker.proc.exitcode}){kept_note(kept)}"
            workers.remove(worker)
            worker.busy = None
            worker.conn.close()
            return
        if message[0] == "beat":
            emit(Heartbeat(props[index].id, message[1]))
            return
        finished[index] = message[1] if message[0] == "done" else message[2]
        worker.busy = None
        if worker.scratch is not None:  # the worker removed what it wrote there
            shutil.rmtree(worker.scratch, ignore_errors=True)
            worker.scratch = None

    try:
        workers.extend(start_worker(context, setup) for _ in range(max(1, min(config.jobs, total))))
        while True:
            while len(outcomes) < total and keep(len(outcomes), final=False):
                pass
            if len(outcomes) == total:
                break
            for worker in list(workers):
                if worker.busy is None:
                    hand_out(worker)
            busy = [w for w in workers if w.busy is not None]
            if not busy:
                if not (waiting or again):
                    break  # nothing left to run: the final pass settles the rest
                workers.append(start_worker(context, setup))  # the workers died
                continue
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy])
            for worker in busy:
                if worker.conn in ready or worker.proc.sentinel in ready:
                    receive(worker)
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        running = [(w.busy, w) for w in workers if w.busy is not None]
        stop_workers(workers)
        for index, worker in running:
            salvaged[index] = salvage(worker, config.fixtures_dir)
    while len(outcomes) < total:
        keep(len(outcomes), final=True)
    return GateReport(tuple(outcomes), run_seed, profile.name, stopped)
