"""Campaign orchestration: N worker processes over plain Hypothesis, one coordinator (issue 6).

Why this shape (harness-lessons lesson 9, pitfall 7):

- Parallelism is by seed per process, never xdist: each worker runs every unit (a property, or the
  stateful agent loop) in slices of examples with its own seed, all on one shared example
  database, so what any worker finds every other one replays first.
- Round-robin with more time for the units still finding new events: a slice that met an event
  (a Hypothesis ``event()`` the strategies or checks emitted, or one of our domain features of the input) this
  worker had not seen doubles the unit's next slice; a slice that met nothing new halves it.
- A slice is ``gate.run_property`` (the one runner; we add no second one) on the property with its
  check wrapped: the wrapper counts examples and events live, notes failures, and is where a stop
  request ends a slice between two examples. (Hypothesis's observability callbacks would do the
  same but made examples ten times slower, measured on ``request.oracle`` against ``reference``.)
- Only the coordinator writes fixtures: workers stage the gate's fixture in a private directory,
  the coordinator keeps the first failure of each property (failure identity = property,
  harness-lessons lesson 5) and retires that property in every worker, so two workers finding one
  bug give one fixture. Each fixture is written atomically the moment its failure arrives, and the
  report is rewritten with it, so a stop at any time leaves every found fixture and a valid report.
- Stops: the time limit, the examples budget, SIGINT or SIGTERM (workers ignore SIGINT; the
  coordinator asks them to stop, lets a failure being shrunk finish within a grace period, then
  terminates what is left). A second signal stops at once; the report is still written.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import multiprocessing
import os
import queue as queue_mod
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import attrs

from ctxmodel import exitcodes
from ctxmodel.codec import copy_json
from ctxmodel.errors import CtxmodelError, TargetError, UsageError
from ctxmodel.fuzz.database import DEFAULT_DB, check_database, describe_database, open_database
from ctxmodel.fuzz.features import features_of
from ctxmodel.fuzz.progress import Progress
from ctxmodel.fuzz.report import write_report
from ctxmodel.fuzz.results import CampaignResult, FailureRecord, PropertyStats

__all__ = [
    "AGENT_LOOP_ID",
    "CampaignConfig",
    "UnitSpec",
    "parse_duration",
    "plan_units",
    "run_campaign",
]

#: The stateful agent-loop model's id among the units (a unit, not a registered property).
AGENT_LOOP_ID = "agent-loop"
#: Slice sizes: the first one, and the bounds the scheduler keeps within.
SLICE_START, SLICE_MIN, SLICE_MAX = 20, 5, 400
#: Agent-loop slices are counted in runs of the machine, each many steps long.
LOOP_SLICE_START, LOOP_SLICE_MIN, LOOP_SLICE_MAX = 5, 2, 50
#: Seconds between live stat messages from a worker.
FLUSH_EVERY = 0.5


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
    #: Seconds a worker gets after a stop request to finish a failure it is shrinking.
    grace: float = 10.0


@attrs.frozen
class UnitSpec:
    id: str
    op: str
    clause: str
    summary: str
    #: Why the unit does not run on this target (a missing op), or ``None``.
    skipped: str | None = None


class StopSlice(KeyboardInterrupt):
    """Ends a slice between two examples. A ``KeyboardInterrupt`` because Hypothesis lets exactly
    that through untouched: any other exception would be taken for a failure, saved to the
    database and shrunk."""


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``30m``, ``2h``, ``1h30m`` -> seconds; one line naming the value when not."""
    import re

    raw = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return float(raw)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", raw)
    if not parts or "".join(n + u for n, u in parts) != raw:
        raise UsageError(f"--duration {text!r}: expected e.g. 90s, 30m, 2h or 1h30m")
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(n) * scale[u] for n, u in parts)


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


# -- worker ----------------------------------------------------------------------------------


@attrs.define
class _Watch:
    """Sees every example of one slice: counts, events, failures, and the points where it may stop."""

    worker: int
    unit: str
    index: int
    queue: Any
    stop: Any
    retired: Any
    deadline: float | None
    hard_deadline: float | None
    examples: int = 0
    first_failure: int | None = None
    new_events: int = 0
    seen: set[str] = attrs.field(factory=set)
    pending_examples: int = 0
    pending_events: dict[str, int] = attrs.field(factory=dict)
    last_flush: float = attrs.field(factory=time.monotonic)
    #: Seconds a failure being shrunk may continue after a stop request.
    grace: float = 5.0
    stop_seen: float | None = None
    #: The latest failing example (params, findings, calls): during shrinking, the best so far.
    last_failure: tuple[dict[str, Any], tuple[str, ...], tuple[Any, ...]] | None = None

    def begin(self) -> None:
        """A new example starts: the one place a slice may end early (never inside an example)."""
        now = time.monotonic()
        if now - self.last_flush >= FLUSH_EVERY:
            self.flush()
        if self.should_stop(now):
            raise StopSlice
        self.examples += 1
        self.pending_examples += 1

    def saw(self, names: set[str]) -> None:
        for name in names:
            self.pending_events[name] = self.pending_events.get(name, 0) + 1
            if name not in self.seen:
                self.seen.add(name)
                self.new_events += 1

    def failed(self) -> None:
        if self.first_failure is None:
            self.first_failure = self.examples

    def should_stop(self, now: float) -> bool:
        if self.hard_deadline is not None and now >= self.hard_deadline:
            return True
        if self.stop.is_set() and self.stop_seen is None:
            self.stop_seen = now
        if self.first_failure is not None:
            # Let Hypothesis finish shrinking what it found, within the grace period.
            return self.stop_seen is not None and now >= self.stop_seen + self.grace
        return (
            self.stop.is_set() or bool(self.retired[self.index]) or (self.deadline is not None and now >= self.deadline)
        )

    def flush(self) -> None:
        if self.pending_examples or self.pending_events:
            self.queue.put(("stats", self.worker, self.unit, self.pending_examples, self.pending_events))
        self.pending_examples = 0
        self.pending_events = {}
        self.last_flush = time.monotonic()


def hypothesis_events() -> set[str]:
    """The ``event()`` labels of the running example so far (the strategies label every draw,
    ``ctxmodel.strategies.labels``). Read through the build context ``event()`` itself writes to."""
    from hypothesis.control import current_build_context

    try:
        events = current_build_context().data.events
    except Exception:  # no running example, or Hypothesis moved the attribute: no events, not a crash
        return set()
    return {k if v in ("", None) else f"{k}: {v}" for k, v in dict(events).items()}


def watched(prop: Any, watch: _Watch) -> Any:
    """``prop`` with its check wrapped by ``watch`` (same id, so the same database key and fixture
    name as an unwatched run)."""
    original = prop.check

    def check(probe: Any, exchange: Any) -> list[Any]:
        watch.begin()
        watch.saw(features_of(exchange.params) | hypothesis_events())
        kept = copy_json(exchange.params)
        try:
            findings = list(original(probe, exchange))
        except Exception as exc:
            watch.failed()  # the gate's judge turns it into a failing finding
            watch.last_failure = (kept, (f"the check raised {type(exc).__name__}: {exc}",), tuple(probe.calls))
            raise
        fails = tuple(f.message for f in findings if f.severity == "fail")
        if fails:
            watch.failed()
            watch.last_failure = (kept, fails, tuple(probe.calls))
        return findings

    return attrs.evolve(prop, check=check)


def _unfinished(
    prop: Any,
    watch: _Watch,
    target: Any,
    policies: Mapping[str, str],
    tokenizer: str,
    seed: int,
    staging: Path,
) -> tuple[FailureRecord, str]:
    """A failure whose shrinking a stop cut short: its best input so far is still written (contract
    §8: every failure becomes a fixture), marked as not fully shrunk."""
    import hypothesis

    from ctxmodel.fixtures import Fixture, exchanges_json, fixture_name, found_now, write_atomic

    assert watch.last_failure is not None
    params, findings, calls = watch.last_failure
    fixture = Fixture(
        property=prop.id,
        op=prop.op,
        params=params,
        observed=exchanges_json(calls),
        target={"name": target.description.name, "version": target.description.version},
        policies=dict(policies),
        tokenizer=tokenizer,
        found=found_now(seed, hypothesis.__version__),
        note="\n".join([*findings, prop.clause, "not fully shrunk: the campaign stopped while shrinking"]),
    )
    path = write_atomic(staging / fixture_name(prop.id, params), fixture.to_json())
    result, failure = _observed(calls, prop.op)
    record = FailureRecord(
        property=prop.id,
        op=prop.op,
        clause=prop.clause,
        findings=findings,
        params=params,
        observed=result,
        target_failure=failure,
        worker=watch.worker,
        found_at=0.0,
        examples_until_failure=0,
        shrunk=False,
    )
    return record, str(path)


def _observed(calls: Sequence[Any], op: str) -> tuple[dict[str, Any] | None, str | None]:
    judged = [c for c in calls if c.op == op] or list(calls)
    if not judged:
        return None, None
    last = judged[-1]
    return last.result, last.failure


def _worker_main(
    worker: int,
    config: CampaignConfig,
    units: Sequence[UnitSpec],
    run_seed: int,
    staging: str,
    started_wall: float,
    queue: Any,
    stop: Any,
    retired: Any,
) -> None:
    """One worker process: open the target, then slices round-robin until stopped or done."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from ctxmodel import gate
    from ctxmodel.policies import resolve
    from ctxmodel.profiles import Profile
    from ctxmodel.properties.registry import get
    from ctxmodel.targets.spec import open_target

    try:
        target = open_target(config.target_spec, timeout=config.timeout)
    except CtxmodelError as exc:
        queue.put(("fatal", worker, str(exc)))
        return
    reason = "stopped"
    try:
        policies = resolve(target.description.policies, config.policies)
        tokenizer = target.description.tokenizer
        database = open_database(config.database)
        profile = Profile("fuzz", max_examples=SLICE_START, deterministic=False, use_database=True)
        budget: int | None = None
        if config.max_examples is not None:
            budget = math.ceil(config.max_examples / config.workers)
        mono_start = time.monotonic() - (time.time() - started_wall)
        deadline = None if config.duration is None else mono_start + config.duration
        # Half the coordinator's grace: a worker reports an unfinished shrink before it is terminated.
        hard_deadline = None if deadline is None else deadline + config.grace / 2
        active = [i for i, u in enumerate(units) if u.skipped is None]
        size = {i: LOOP_SLICE_START if units[i].id == AGENT_LOOP_ID else SLICE_START for i in active}
        done_examples = dict.fromkeys(active, 0)
        rounds = dict.fromkeys(active, 0)
        seen: dict[int, set[str]] = {i: set() for i in active}
        queue.put(("ready", worker))
        while True:
            live = [i for i in active if not retired[i] and (budget is None or done_examples[i] < budget)]
            if not live:
                reason = "max-examples" if budget is not None else "exhausted"
                break
            if stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                reason = "stopped"
                break
            for i in live:
                if stop.is_set() or retired[i] or (deadline is not None and time.monotonic() >= deadline):
                    break
                unit = units[i]
                n = size[i] if budget is None else max(1, min(size[i], budget - done_examples[i]))
                slice_seed = derive_seed(run_seed, worker, unit.id, rounds[i])
                rounds[i] += 1
                watch = _Watch(
                    worker,
                    unit.id,
                    i,
                    queue,
                    stop,
                    retired,
                    deadline,
                    hard_deadline,
                    seen=seen[i],
                    grace=config.grace / 2,
                )
                found: FailureRecord | None = None
                error: str | None = None
                fixture: str | None = None
                try:
                    if unit.id == AGENT_LOOP_ID:
                        from ctxmodel.fuzz.agent_loop import run_loop_slice

                        loop = run_loop_slice(
                            target,
                            policies=policies,
                            tokenizer=tokenizer,
                            settings=profile.hypothesis_settings(max_examples=n, database=database),
                            seed=slice_seed,
                            fixtures_dir=Path(staging) / f"w{worker}",
                            watch=watch,
                        )
                        if loop.failure is not None:
                            found = loop.failure
                            fixture = loop.fixture
                    else:
                        prop = get(unit.id)
                        outcome = gate.run_property(
                            watched(prop, watch),
                            target,
                            policies=policies,
                            tokenizer=tokenizer,
                            profile=profile,
                            fixtures_dir=Path(staging) / f"w{worker}",
                            seed=slice_seed,
                            max_examples=n,
                            database=database,
                        )
                        if outcome.status == "failed" and outcome.kinds:
                            first = outcome.kinds[0]
                            result, failure = _observed(first.calls, prop.op)
                            found = FailureRecord(
                                property=prop.id,
                                op=prop.op,
                                clause=prop.clause,
                                findings=tuple(k.finding.message for k in outcome.kinds),
                                params=first.params,
                                observed=result,
                                target_failure=failure,
                                worker=worker,
                                found_at=0.0,
                                examples_until_failure=0,
                                shrunk=not outcome.flaky,
                            )
                            fixture = None if first.fixture is None else str(first.fixture)
                        elif outcome.status == "error":
                            error = outcome.reason
                except StopSlice:
                    if watch.last_failure is not None and unit.id != AGENT_LOOP_ID:
                        found, fixture = _unfinished(
                            get(unit.id), watch, target, policies, tokenizer, slice_seed, Path(staging) / f"w{worker}"
                        )
                finally:
                    watch.flush()
                done_examples[i] += watch.examples
                if found is not None:
                    found = attrs.evolve(
                        found,
                        worker=worker,
                        found_at=time.time() - started_wall,
                        examples_until_failure=(
                            done_examples[i] - watch.examples + (watch.first_failure or watch.examples)
                        ),
                    )
                    queue.put(("failure", worker, found.to_json(), fixture))
                    active.remove(i)
                elif error is not None:
                    queue.put(("error", worker, unit.id, error))
                    active.remove(i)
                else:
                    grew = watch.new_events > 0
                    lo, hi = (LOOP_SLICE_MIN, LOOP_SLICE_MAX) if unit.id == AGENT_LOOP_ID else (SLICE_MIN, SLICE_MAX)
                    size[i] = min(hi, size[i] * 2) if grew else max(lo, size[i] // 2)
    except CtxmodelError as exc:
        queue.put(("fatal", worker, str(exc)))
        reason = "error"
    finally:
        target.close()
        queue.put(("done", worker, reason))


# -- coordinator -----------------------------------------------------------------------------


@attrs.define
class _UnitState:
    spec: UnitSpec
    examples: int = 0
    events: dict[str, int] = attrs.field(factory=dict)
    failures: int = 0
    error: str | None = None


@attrs.define
class _Run:
    config: CampaignConfig
    units: list[UnitSpec]
    target_info: dict[str, Any]
    policies: dict[str, str]
    seed: int
    started_wall: float
    started_iso: str
    states: dict[str, _UnitState] = attrs.field(factory=dict)
    failures: list[FailureRecord] = attrs.field(factory=list)
    duplicates: int = 0
    timeline: list[tuple[float, int, int]] = attrs.field(factory=list)
    stopped: str = "running"
    fatal: list[str] = attrs.field(factory=list)

    def examples(self) -> int:
        return sum(s.examples for s in self.states.values())

    def result(self, now: float) -> CampaignResult:
        import hypothesis

        import ctxmodel

        duration = max(now - self.started_wall, 1e-9)
        props = tuple(
            PropertyStats(
                id=s.spec.id,
                op=s.spec.op,
                clause=s.spec.clause,
                summary=s.spec.summary,
                examples=s.examples,
                events=dict(s.events),
                failures=s.failures,
                skipped=s.spec.skipped or s.error,
            )
            for s in self.states.values()
        )
        errors = any(s.error for s in self.states.values())
        code = exitcodes.FAILED if self.failures else (exitcodes.USAGE if errors else exitcodes.OK)
        return CampaignResult(
            target=self.target_info,
            policies=self.policies,
            database=describe_database(self.config.database),
            workers=self.config.workers,
            seed=self.seed,
            started=self.started_iso,
            finished=_iso(now),
            duration=duration,
            stopped=self.stopped,
            properties=props,
            failures=tuple(self.failures),
            timeline=(*self.timeline, (duration, self.examples(), len(self.failures))),
            versions={
                "ctxmodel": ctxmodel.__version__,
                "hypothesis": hypothesis.__version__,
                "python": sys.version.split()[0],
            },
            exit_code=code,
        )


def _iso(wall: float) -> str:
    stamp = datetime.datetime.fromtimestamp(wall, datetime.UTC).replace(microsecond=0)
    return stamp.isoformat().replace("+00:00", "Z")


def _describe_target(config: CampaignConfig) -> tuple[dict[str, Any], dict[str, str], frozenset[str]]:
    """Open the target once in the coordinator: a target that cannot start is exit 3 before any
    worker is spawned (contract §9), and the declared policies are resolved once for everyone."""
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


def run_campaign(config: CampaignConfig, *, out: TextIO | None = None, tty: bool | None = None) -> CampaignResult:
    """Run one campaign to its end and return what it found; the report (if asked for) is written.

    Raises ``UsageError`` (exit 2) for a bad configuration and ``TargetError`` (exit 3) when the
    target cannot be started; everything after that is in the result.
    """
    if config.workers < 1:
        raise UsageError("--workers: expected at least 1")
    if config.duration is None and config.max_examples is None:
        raise UsageError("give --duration or --max-examples (a campaign needs an end)")
    check_database(config.database)
    target_info, policies, ops = _describe_target(config)
    units = plan_units(ops, config.property_ids, agent_loop=config.agent_loop)
    seed = config.seed if config.seed is not None else random.getrandbits(32)
    stream = out if out is not None else sys.stderr
    progress = Progress(stream, tty=stream.isatty() if tty is None else tty)
    started = time.time()
    run = _Run(config, units, target_info, policies, seed, started, _iso(started))
    run.states = {u.id: _UnitState(u) for u in units}
    Path(config.fixtures_dir).mkdir(parents=True, exist_ok=True)
    staging = tempfile.mkdtemp(prefix="ctxmodel-fuzz-")
    context = multiprocessing.get_context("spawn")
    queue: Any = context.Queue()
    stop: Any = context.Event()
    retired: Any = context.Array("b", len(units), lock=False)
    index = {u.id: i for i, u in enumerate(units)}
    signals: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        signals.append(signum)

    old_handlers = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers = [
        context.Process(
            target=_worker_main,
            args=(w, config, units, seed, staging, started, queue, stop, retired),
            name=f"ctxmodel-fuzz-{w}",
            daemon=True,
        )
        for w in range(config.workers)
    ]
    progress.start(run.target_info, len([u for u in units if u.skipped is None]), config.workers, seed)
    try:
        for proc in workers:
            proc.start()
        _coordinate(run, workers, queue, stop, retired, index, signals, progress)
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
        for proc in workers:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
        shutil.rmtree(staging, ignore_errors=True)
    if run.fatal and not run.examples() and not run.failures:
        raise TargetError(run.fatal[0])
    result = run.result(time.time())
    if config.report_dir:
        write_report(result, config.report_dir)
    progress.finish(result, config.report_dir)
    return result


def _coordinate(
    run: _Run,
    workers: Sequence[Any],
    queue: Any,
    stop: Any,
    retired: Any,
    index: Mapping[str, int],
    signals: list[int],
    progress: Progress,
) -> None:
    config = run.config
    stop_at: float | None = None  # monotonic time of the stop request
    finished: set[int] = set()
    reasons: list[str] = []
    mono0 = time.monotonic()
    next_sample = 0.0

    def request_stop(why: str) -> None:
        nonlocal stop_at
        if stop_at is None:
            stop_at = time.monotonic()
            run.stopped = why
            stop.set()

    handlers: dict[str, Callable[..., None]] = {}

    def on_stats(worker: int, unit: str, examples: int, events: Mapping[str, int]) -> None:
        state = run.states[unit]
        state.examples += examples
        for name, count in events.items():
            state.events[name] = state.events.get(name, 0) + count

    def on_failure(worker: int, record_json: dict[str, Any], staged: str | None) -> None:
        record = _record_from_json(record_json)
        state = run.states[record.property]
        if state.failures:
            run.duplicates += 1
            if staged:
                Path(staged).unlink(missing_ok=True)
            return
        retired[index[record.property]] = 1
        final: str | None = None
        if staged and Path(staged).exists():
            final = str(_promote_staged(Path(staged), Path(config.fixtures_dir)))
        record = attrs.evolve(record, fixture=final)
        state.failures = 1
        run.failures.append(record)
        progress.failure(record)
        if config.report_dir:
            write_report(run.result(time.time()), config.report_dir)

    def on_error(worker: int, unit: str, text: str) -> None:
        state = run.states[unit]
        if state.error is None:
            state.error = text
            progress.note(f"ERROR {unit}: {text}")

    def on_fatal(worker: int, text: str) -> None:
        run.fatal.append(text)
        progress.note(f"worker {worker}: {text}")

    def on_done(worker: int, reason: str) -> None:
        finished.add(worker)
        reasons.append(reason)

    handlers.update(
        stats=on_stats, failure=on_failure, error=on_error, fatal=on_fatal, done=on_done, ready=lambda w: None
    )
    while True:
        try:
            message = queue.get(timeout=0.1)
            handlers[message[0]](*message[1:])
            continue_draining = True
        except queue_mod.Empty:
            continue_draining = False
        now = time.monotonic()
        if signals:
            request_stop("interrupted")
            if len(signals) > 1:
                for proc in workers:
                    if proc.is_alive():
                        proc.terminate()
        if config.duration is not None and now - mono0 >= config.duration:
            request_stop("time-limit")
        if stop_at is not None and now - stop_at >= config.grace:
            for proc in workers:
                if proc.is_alive():
                    proc.terminate()
        if now - mono0 >= next_sample:
            run.timeline.append((now - mono0, run.examples(), len(run.failures)))
            next_sample += 0.5
            progress.update(run.result(time.time()))
        if continue_draining:
            continue
        alive = [p for p in workers if p.is_alive()]
        if not alive:
            # Drain what the last workers said before they exited.
            while True:
                try:
                    message = queue.get(timeout=0.2)
                except queue_mod.Empty:
                    break
                handlers[message[0]](*message[1:])
            break
    if run.stopped == "running":
        run.stopped = "max-examples" if "max-examples" in reasons else ("exhausted" if reasons else "stopped")
    if run.stopped == "max-examples" and all(s.failures or s.spec.skipped or s.error for s in run.states.values()):
        run.stopped = "exhausted"


def _promote_staged(staged: Path, directory: Path) -> Path:
    """The coordinator's write: the staged fixture moves to its final name (same property and same
    shrunk input give the same name, ``fixtures.fixture_name``), atomically."""
    import json

    from ctxmodel.fixtures import write_atomic

    value = json.loads(staged.read_text(encoding="utf-8"))
    final = write_atomic(directory / staged.name, value)
    staged.unlink(missing_ok=True)
    return final


def _record_from_json(data: Mapping[str, Any]) -> FailureRecord:
    return FailureRecord(
        property=data["property"],
        op=data["op"],
        clause=data["clause"],
        findings=tuple(data["findings"]),
        params=data["params"],
        observed=data["observed"],
        target_failure=data["targetFailure"],
        worker=data["worker"],
        found_at=data["foundAt"],
        examples_until_failure=data["examplesUntilFailure"],
        fixture=data.get("fixture"),
        steps=tuple(data.get("steps", ())),
        shrunk=data.get("shrunk", True),
    )


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)
