"""Campaign orchestration: N worker processes over plain Hypothesis, one coordinator.

Why this shape (what long Hypothesis campaigns need: seeds, not xdist; time where new events still come):

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
- A failure is a kind, as in ``ctxmodel check`` (``results.finding_key``: ``property/code``, or
  ``target-<fault>``). Only the coordinator writes fixtures: workers stage the gate's fixture of each
  kind in a private directory, the coordinator keeps the first of each kind and tells every worker
  that the kind is known (``gate.RunOptions.known_kinds``: met, noted, neither raised nor shrunk), so
  two workers meeting one kind give one fixture while the property keeps running for the kinds it
  has not met yet. Each fixture is written atomically the moment its kind arrives, and the report is
  rewritten with it, so a stop at any time leaves every found fixture and a valid report.
- With ``--campaign NAME`` (and a Redis ``--db``) the campaign is kept in Redis
  (``fuzz.shared_campaign``): each kind is claimed there once, whichever machine met it, the counts
  and events are summed there, and the kinds other machines claimed are known to this one's workers.
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

from ctxmodel.codec import copy_json
from ctxmodel.errors import CtxmodelError, TargetError, UsageError
from ctxmodel.fuzz.database import DEFAULT_DB, KeepingDatabase, check_database, describe_database, open_database
from ctxmodel.fuzz.features import features_of
from ctxmodel.fuzz.progress import Progress
from ctxmodel.fuzz.report import write_report
from ctxmodel.fuzz.results import CampaignResult, FailureRecord, PropertyStats
from ctxmodel.fuzz.shared_campaign import SharedCampaign, check_name, load_result
from ctxmodel.results import verdict_code

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
#: Seconds between two looks at the kinds other machines of a Redis campaign claimed.
POLL_EVERY = 1.0
#: The file, in the staging directory, where the coordinator lists the kinds known to the campaign.
KNOWN_FILE = "known-kinds.json"


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
    #: The name of a campaign kept in the Redis ``database``, which other machines may join.
    campaign: str | None = None


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
    queue: Any
    stop: Any
    deadline: float | None
    hard_deadline: float | None
    #: Kinds the campaign holds when the slice starts: met again, they are no failure of this slice.
    known: frozenset[str] = frozenset()
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
    #: The latest failing example (kind, params, findings, calls): during shrinking, the best so far.
    last_failure: tuple[str, dict[str, Any], tuple[str, ...], tuple[Any, ...]] | None = None

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
        return self.stop.is_set() or (self.deadline is not None and now >= self.deadline)

    def flush(self) -> None:
        if self.pending_examples or self.pending_events:
            self.queue.put(("stats", self.worker, self.unit, self.pending_examples, self.pending_events))
        self.pending_examples = 0
        self.pending_events = {}
        self.last_flush = time.monotonic()


def hypothesis_events() -> set[str]:
    """The ``event()`` labels of the running example so far (the strategies label every draw,
    ``ctxmodel.strategies.labels``)."""
    from ctxmodel.hypothesis_hooks import example_events

    return example_events()


def watched(prop: Any, watch: _Watch) -> Any:
    """``prop`` with its check wrapped by ``watch`` (same id, so the same database key and fixture
    name as an unwatched run). A finding of a kind the campaign holds is not a failure of the slice:
    the gate notes it and goes on (``known_kinds``)."""
    from ctxmodel.results import finding_key

    original = prop.check

    def check(probe: Any, exchange: Any) -> list[Any]:
        watch.begin()
        watch.saw(features_of(exchange.params) | hypothesis_events())
        kept = copy_json(exchange.params)
        try:
            findings = list(original(probe, exchange))
        except Exception as exc:
            key = _raised_kind(prop, exc)
            if key is not None and key not in watch.known:
                watch.failed()
                text = f"the check raised {type(exc).__name__}: {exc}"
                watch.last_failure = (key, kept, (text,), tuple(probe.calls))
            raise
        fails = [f for f in findings if f.severity == "fail" and finding_key(prop, f) not in watch.known]
        if fails:
            watch.failed()
            key = finding_key(prop, fails[0])
            texts = tuple(f.message for f in fails if finding_key(prop, f) == key)
            watch.last_failure = (key, kept, texts, tuple(probe.calls))
        return findings

    return attrs.evolve(prop, check=check)


def _raised_kind(prop: Any, exc: Exception) -> str | None:
    """The kind the gate makes of an exception a check raised (``None`` for Hypothesis's own, which it
    lets through)."""
    from hypothesis.errors import HypothesisException

    from ctxmodel.gate import raised_finding
    from ctxmodel.results import finding_key

    if isinstance(exc, HypothesisException):
        return None
    return finding_key(prop, raised_finding(exc, prop.op))


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
    from ctxmodel.fixtures import write_failure

    assert watch.last_failure is not None
    key, params, findings, calls = watch.last_failure
    path = write_failure(
        staging, property_id=prop.id, op=prop.op, kind=key, params=params, calls=calls,
        target={"name": target.description.name, "version": target.description.version}, policies=policies,
        tokenizer=tokenizer, seed=seed,
        notes=[*findings, prop.clause, "not fully shrunk: the campaign stopped while shrinking"],
    )
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
        kind=key,
    )
    return record, str(path)


def _observed(calls: Sequence[Any], op: str) -> tuple[dict[str, Any] | None, str | None]:
    judged = [c for c in calls if c.op == op] or list(calls)
    if not judged:
        return None, None
    last = judged[-1]
    return last.result, last.failure


def _read_known(staging: str) -> frozenset[str]:
    """The kinds the coordinator has told the workers about (an unreadable file: none yet)."""
    import json

    try:
        value = json.loads((Path(staging) / KNOWN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(str(k) for k in value) if isinstance(value, list) else frozenset()


def _kind_records(outcome: Any, prop: Any, worker: int) -> list[tuple[FailureRecord, str | None, int]]:
    """Each failing kind of a slice's outcome: its record, its staged fixture, the example it was met at."""
    out = []
    for kind in outcome.kinds:
        result, failure = _observed(kind.calls, prop.op)
        record = FailureRecord(
            property=prop.id,
            op=prop.op,
            clause=prop.clause,
            findings=(kind.finding.message,),
            params=kind.params,
            observed=result,
            target_failure=failure,
            worker=worker,
            found_at=0.0,
            examples_until_failure=0,
            shrunk=not outcome.flaky,
            kind=kind.key,
        )
        out.append((record, None if kind.fixture is None else str(kind.fixture), kind.first_example))
    return out


def _worker_main(
    worker: int,
    config: CampaignConfig,
    units: Sequence[UnitSpec],
    run_seed: int,
    staging: str,
    started_wall: float,
    queue: Any,
    stop: Any,
) -> None:
    """One worker process: open the target, then slices round-robin until stopped or done. A unit
    keeps running after it failed: each slice hands the gate the kinds known so far, so it looks for
    the ones nobody has met yet."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from hypothesis import Phase

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
        keeping = KeepingDatabase(database)
        # No target phase: a slice is a short run (``profiles._SHORT_RUN_PHASES``), and on a property
        # that fails in several ways the hill-climbing with the example database never ended (a
        # 20-example slice on tests/targets/three_bugs.py ran for minutes; 30 s without it).
        phases = tuple(p for p in Phase if p is not Phase.target)
        profile = Profile("fuzz", max_examples=SLICE_START, deterministic=False, use_database=True, phases=phases)
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
        reported: set[str] = set()  # kinds this worker sent, before the coordinator's list has them
        fixtures_dir = Path(staging) / f"w{worker}"
        queue.put(("ready", worker))
        while True:
            live = [i for i in active if budget is None or done_examples[i] < budget]
            if not live:
                reason = "max-examples" if budget is not None else "exhausted"
                break
            if stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                reason = "stopped"
                break
            for i in live:
                if stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                    break
                unit = units[i]
                n = size[i] if budget is None else max(1, min(size[i], budget - done_examples[i]))
                slice_seed = derive_seed(run_seed, worker, unit.id, rounds[i])
                rounds[i] += 1
                known = _read_known(staging) | reported
                watch = _Watch(
                    worker,
                    unit.id,
                    queue,
                    stop,
                    deadline,
                    hard_deadline,
                    known=known,
                    seen=seen[i],
                    grace=config.grace / 2,
                )
                slice_db = keeping if known else database
                found: list[tuple[FailureRecord, str | None, int]] = []
                error: str | None = None
                try:
                    if unit.id == AGENT_LOOP_ID:
                        from ctxmodel.fuzz.agent_loop import run_loop_slice

                        loop = run_loop_slice(
                            target,
                            policies=policies,
                            tokenizer=tokenizer,
                            settings=profile.hypothesis_settings(max_examples=n, database=slice_db),
                            seed=slice_seed,
                            fixtures_dir=fixtures_dir,
                            watch=watch,
                            known_kinds=known,
                        )
                        found = [(record, path, 0) for record, path in loop.found]
                    else:
                        prop = get(unit.id)
                        outcome = gate.run_property(
                            watched(prop, watch),
                            target,
                            policies=policies,
                            tokenizer=tokenizer,
                            profile=profile,
                            fixtures_dir=fixtures_dir,
                            seed=slice_seed,
                            max_examples=n,
                            database=slice_db,
                            options=gate.RunOptions(known_kinds=known),
                        )
                        if outcome.status == "failed":
                            found = _kind_records(outcome, prop, worker)
                        elif outcome.status == "error":
                            error = outcome.reason
                except StopSlice:
                    if watch.last_failure is not None and unit.id != AGENT_LOOP_ID:
                        cut_short = _unfinished(
                            get(unit.id), watch, target, policies, tokenizer, slice_seed, fixtures_dir
                        )
                        found = [(*cut_short, 0)]
                finally:
                    watch.flush()
                done_examples[i] += watch.examples
                before = done_examples[i] - watch.examples
                for record, path, first in found:
                    at = first or watch.first_failure or watch.examples
                    record = attrs.evolve(
                        record, worker=worker, found_at=time.time() - started_wall, examples_until_failure=before + at
                    )
                    reported.add(record.key)
                    queue.put(("failure", worker, record.to_json(), path))
                if error is not None:
                    queue.put(("error", worker, unit.id, error))
                    active.remove(i)
                else:
                    # A slice that met a new kind is worth as much as one that met a new event.
                    grew = bool(found) or watch.new_events > 0
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
    #: Distinct kinds this property met (claimed by this machine).
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
    staging: str = ""
    states: dict[str, _UnitState] = attrs.field(factory=dict)
    #: One record per kind this machine kept, in the order met.
    failures: list[FailureRecord] = attrs.field(factory=list)
    #: Every kind the campaign holds: kept here, or claimed by another machine of a Redis campaign.
    known: set[str] = attrs.field(factory=set)
    #: The Redis campaign this run joined, if any.
    shared: SharedCampaign | None = None
    #: Kinds kept here while Redis could not be reached: claimed there when it answers again.
    unclaimed: list[tuple[FailureRecord, dict[str, Any] | None]] = attrs.field(factory=list)
    timeline: list[tuple[float, int, int]] = attrs.field(factory=list)
    stopped: str = "running"
    fatal: list[str] = attrs.field(factory=list)

    def examples(self) -> int:
        return sum(s.examples for s in self.states.values())

    def machine(self, finished: float | None = None) -> dict[str, Any]:
        """This run as one of a Redis campaign's machines."""
        import socket

        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "workers": self.config.workers,
            "seed": self.seed,
            "started": self.started_iso,
            "startedWall": self.started_wall,
            "finishedWall": finished,
            "stopped": self.stopped,
            "examples": self.examples(),
            "kinds": [f.key for f in self.failures],
            "properties": [u.id for u in self.units if u.skipped is None],
        }

    def report(self, now: float) -> CampaignResult:
        """What the report shows: this run, or for a Redis campaign every machine's (this run's own
        result when Redis cannot be read)."""
        if self.shared is not None:
            import redis

            try:
                return load_result(self.shared, self.config.fixtures_dir, now)
            except redis.RedisError:
                pass
        return self.result(now)

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
        # The rules of ``check`` (``results.verdict_code``); a campaign's stop signal is how it is
        # meant to end, so an interrupted campaign exits with its verdict, not 130.
        ran = [s for s in self.states.values() if not s.spec.skipped]
        code = verdict_code(
            failed=bool(self.failures), unrunnable=any(s.error for s in self.states.values()),
            judged_nothing=bool(ran) and not any(s.examples for s in ran),
        )
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

    def tell_workers(self) -> None:
        """The kinds known so far, where every worker reads them at the start of its next slice."""
        from ctxmodel.fixtures import write_atomic

        write_atomic(Path(self.staging) / KNOWN_FILE, sorted(self.known))


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
    With ``config.campaign`` the run joins that Redis campaign and returns (and reports) all of it.

    Raises ``UsageError`` (exit 2) for a bad configuration and ``TargetError`` (exit 3) when the
    target cannot be started; everything after that is in the result.
    """
    if config.workers < 1:
        raise UsageError("--workers: expected at least 1")
    if config.duration is None and config.max_examples is None:
        raise UsageError("give --duration or --max-examples (a campaign needs an end)")
    if config.campaign is not None:
        check_name(config.campaign, config.database)
    check_database(config.database)
    target_info, policies, ops = _describe_target(config)
    units = plan_units(ops, config.property_ids, agent_loop=config.agent_loop)
    seed = config.seed if config.seed is not None else random.getrandbits(32)
    stream = out if out is not None else sys.stderr
    progress = Progress(stream, tty=stream.isatty() if tty is None else tty)
    started = time.time()
    staging = tempfile.mkdtemp(prefix="ctxmodel-fuzz-")
    run = _Run(config, units, target_info, policies, seed, started, _iso(started), staging)
    run.states = {u.id: _UnitState(u) for u in units}
    try:
        if config.campaign is not None:
            run.shared = _join(run, config.campaign)
        run.tell_workers()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    Path(config.fixtures_dir).mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    queue: Any = context.Queue()
    stop: Any = context.Event()
    signals: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        signals.append(signum)

    old_handlers = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers = [
        context.Process(
            target=_worker_main,
            args=(w, config, units, seed, staging, started, queue, stop),
            name=f"ctxmodel-fuzz-{w}",
            daemon=True,
        )
        for w in range(config.workers)
    ]
    progress.start(run.target_info, len([u for u in units if u.skipped is None]), config.workers, seed)
    if run.shared is not None:
        progress.note(f"campaign {config.campaign} ({config.database}): {len(run.known)} kinds known")
    try:
        for proc in workers:
            proc.start()
        _coordinate(run, workers, queue, stop, signals, progress)
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
        for proc in workers:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=5)
        shutil.rmtree(staging, ignore_errors=True)
    now = time.time()
    if run.shared is not None:
        _sync(run, progress, now, final=True)
    if run.fatal and not run.examples() and not run.failures:
        raise TargetError(run.fatal[0])
    result = run.report(now)
    if config.report_dir:
        write_report(result, config.report_dir)
    progress.finish(result, config.report_dir)
    return result


def _join(run: _Run, name: str) -> SharedCampaign:
    """Join the Redis campaign ``name``: this run's units and itself as one more machine; the kinds
    it already holds are known to the workers from their first slice."""
    import redis

    shared = SharedCampaign(run.config.database, name)
    specs = [attrs.asdict(u) for u in run.units]
    try:
        shared.join(run.target_info, run.policies, specs, run.machine(), run.started_wall)
        run.known.update(shared.known())
    except redis.RedisError as exc:
        raise UsageError(f"--campaign {name}: {exc}") from None
    return shared


def _sync(run: _Run, progress: Progress, wall: float, *, final: bool = False) -> None:
    """Exchange with the Redis campaign: kinds kept while it was unreachable are claimed, kinds other
    machines claimed become known here, one timeline point is kept (and, at the end, why this
    machine stopped). A Redis that does not answer is said once and tried again at the next call."""
    import redis

    shared = run.shared
    assert shared is not None
    try:
        while run.unclaimed:
            record, fixture = run.unclaimed[0]
            shared.claim(record, fixture)
            run.unclaimed.pop(0)
        theirs = shared.known() - run.known
        if theirs:
            run.known.update(theirs)
            run.tell_workers()
            for key in sorted(theirs):
                progress.note(f"met by another machine: {key}")
        shared.sample(wall)
        if final:
            shared.machine_done(run.machine(finished=wall))
        run.fatal = [f for f in run.fatal if not f.startswith("redis: ")]
    except redis.RedisError as exc:
        text = f"redis: {exc}"
        if text not in run.fatal:
            run.fatal.append(text)
            progress.note(f"campaign {shared.name}: Redis did not answer ({exc}); what is found is kept here")


def _coordinate(
    run: _Run,
    workers: Sequence[Any],
    queue: Any,
    stop: Any,
    signals: list[int],
    progress: Progress,
) -> None:
    import json

    import redis

    config = run.config
    stop_at: float | None = None  # monotonic time of the stop request
    finished: set[int] = set()
    reasons: list[str] = []
    mono0 = time.monotonic()
    next_sample = 0.0
    next_poll = 0.0
    # Where a found_at of this machine falls on the campaign's clock (the first machine's start).
    offset = 0.0 if run.shared is None else run.started_wall - run.shared.started_wall

    def request_stop(why: str) -> None:
        nonlocal stop_at
        if stop_at is None:
            stop_at = time.monotonic()
            run.stopped = why
            stop.set()

    def shared_call(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except redis.RedisError as exc:
            progress.note(f"campaign {config.campaign}: Redis did not answer ({exc})")
            return None

    handlers: dict[str, Callable[..., None]] = {}

    def on_stats(worker: int, unit: str, examples: int, events: Mapping[str, int]) -> None:
        state = run.states[unit]
        state.examples += examples
        for name, count in events.items():
            state.events[name] = state.events.get(name, 0) + count
        if run.shared is not None:
            shared = run.shared
            shared_call(lambda: shared.add_stats(unit, examples, events))

    def on_failure(worker: int, record_json: dict[str, Any], staged: str | None) -> None:
        record = FailureRecord.from_json(record_json)
        staged_path = Path(staged) if staged else None
        if record.key in run.known:
            # Met by two workers (or machines) before they heard of each other: one fixture.
            if staged_path is not None:
                staged_path.unlink(missing_ok=True)
            return
        run.known.add(record.key)
        run.tell_workers()
        fixture: dict[str, Any] | None = None
        final: Path | None = None
        if staged_path is not None and staged_path.exists():
            fixture = json.loads(staged_path.read_text(encoding="utf-8"))
            final = Path(config.fixtures_dir) / staged_path.name
        record = attrs.evolve(record, fixture=None if final is None else str(final))
        if run.shared is not None:
            shared = run.shared
            kept = attrs.evolve(record, found_at=record.found_at + offset)
            won = shared_call(lambda: shared.claim(kept, fixture))
            if won is False:
                if staged_path is not None:
                    staged_path.unlink(missing_ok=True)
                progress.note(f"met by another machine: {record.key}")
                return
            if won is None:
                run.unclaimed.append((kept, fixture))
        if staged_path is not None and staged_path.exists():
            _promote_staged(staged_path, Path(config.fixtures_dir))
        run.states[record.property].failures += 1
        run.failures.append(record)
        progress.failure(record)
        if config.report_dir:
            write_report(run.report(time.time()), config.report_dir)

    def on_error(worker: int, unit: str, text: str) -> None:
        state = run.states[unit]
        if state.error is None:
            state.error = text
            progress.note(f"ERROR {unit}: {text}")
            if run.shared is not None:
                shared = run.shared
                shared_call(lambda: shared.add_error(unit, text))

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
        if run.shared is not None and now - mono0 >= next_poll:
            next_poll = now - mono0 + POLL_EVERY
            _sync(run, progress, time.time())
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
    if run.stopped == "max-examples" and all(s.spec.skipped or s.error for s in run.states.values()):
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


def default_workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)
