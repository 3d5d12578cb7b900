"""The engine: a run of properties against a target, told as events (contract §8, §9).

Every way of running properties goes through here: ``ctxmodel check`` (one process, or ``--jobs N``
worker processes), the pytest plugin (one property per test item, one ``Session`` for the pytest
session), and the baseline and benchmark runners. What a run is asked to do is one ``RunConfig``;
what it found is one ``GateReport``; everything in between is an event (``ctxmodel.events``) handed
to the run's handlers: the text report, the ``--coverage`` table, the heartbeat, the plugin's items.
A property's own run (one Hypothesis test, its kinds, shrinking, fixtures) is ``gate.run_property``.

What a run carries from one property to the next is the set of target faults already reported: a
later property rejects the inputs that meet one rather than report it again (``RunOptions``). The
schedulers differ only in when a property runs; the kinds, fixtures and events are the same.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ctxmodel import exitcodes, gate
from ctxmodel.events import Emitter, Handler, PropertyFinished, PropertyStarted, RunFinished, RunStarted, TargetFault
from ctxmodel.gate import Outcome, RunOptions
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Property
from ctxmodel.targets.base import Target

__all__ = [
    "GateReport",
    "RunConfig",
    "Session",
    "exit_code",
    "faulting_target",
    "past_deadline",
    "run",
    "run_seed_of",
    "target_faults",
    "tell_finished",
    "too_many_failures",
]


def _frozen(value: Collection[str]) -> frozenset[str]:
    return frozenset(value)


def _regressions(value: Mapping[str, Sequence[dict[str, Any]]] | None) -> dict[str, tuple[dict[str, Any], ...]]:
    return {key: tuple(examples) for key, examples in (value or {}).items()}


@attrs.frozen(kw_only=True)
class RunConfig:
    """What a run is asked to do, whoever asks (the CLI, the plugin, a test, a benchmark)."""

    profile: Profile
    policies: Mapping[str, str] = attrs.field(factory=dict)
    fixtures_dir: Path = attrs.field(default=Path("ctxmodel-fixtures"), converter=Path)
    #: ``None``: 0 for a deterministic profile, else a fresh seed (printed at the end of every run).
    seed: int | None = None
    max_examples: int | None = None
    #: An ``ExampleDatabase``, ``"default"`` (the profile's) or ``None``.
    database: Any = "default"
    #: Promoted fixtures' params by property id, run first as explicit examples.
    regressions: Mapping[str, tuple[dict[str, Any], ...]] = attrs.field(factory=dict, converter=_regressions)
    #: Warnings fail the run too (contract §8).
    strict: bool = False
    #: Stop after this many failed properties; the rest are never run.
    max_failures: int | None = None
    #: Seconds for the whole run: no property starts after it.
    deadline: float | None = None
    #: A baseline's kinds whose fixture still reproduces (``RunOptions.known_kinds``).
    known_kinds: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen)
    #: Every kind of the baseline: a property failing only on these does not count towards
    #: ``max_failures`` (the run would stop early and pass).
    baseline_kinds: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen)
    #: Worker processes; above 1 each opens ``target_spec`` with ``timeout`` itself.
    jobs: int = 1
    target_spec: str | None = None
    timeout: float = 10.0
    #: Drop the messages a failure does not need after the shrink (``ctxmodel.trim``).
    trim: bool = True

    def run_seed(self) -> int:
        return run_seed_of(self.seed, self.profile)

    def options(self, known_faults: Collection[str], emit: Emitter) -> RunOptions:
        return RunOptions(
            strict=self.strict, known_faults=frozenset(known_faults), known_kinds=self.known_kinds, emit=emit,
            trim=self.trim,
        )


@attrs.frozen
class GateReport:
    outcomes: tuple[Outcome, ...]
    seed: int
    profile: str
    #: Why the run stopped early, if it did (an interrupt, the deadline, ``--max-failures``).
    stopped: str = ""


def run_seed_of(seed: int | None, profile: Profile) -> int:
    """The seed a run uses: the one asked for, else 0 for a deterministic profile, else a fresh one
    (printed at the end of every run so that it can be repeated)."""
    return seed if seed is not None else (0 if profile.deterministic else random.getrandbits(32))


@attrs.define
class Session:
    """Properties run one after another on one target, each told the faults reported before it.

    ``ctxmodel check`` runs its properties through one session; the pytest plugin keeps one for the
    pytest session and runs one property per test item through it."""

    target: Target
    config: RunConfig
    emit: Emitter = attrs.field(factory=Emitter)
    known_faults: set[str] = attrs.field(factory=set)

    def __attrs_post_init__(self) -> None:
        if self.config.seed is None:
            self.config = attrs.evolve(self.config, seed=self.config.run_seed())

    @property
    def seed(self) -> int:
        assert self.config.seed is not None
        return self.config.seed

    def run_one(self, prop: Property) -> Outcome:
        outcome = self.execute(prop)
        self.finished(outcome)
        return outcome

    def execute(self, prop: Property) -> Outcome:
        """The property's run, its ``PropertyFinished`` not yet told (``finished``)."""
        self.emit(PropertyStarted(prop))
        config = self.config
        return gate.run_property(
            prop,
            self.target,
            policies=config.policies,
            tokenizer=self.target.description.tokenizer,
            profile=config.profile,
            fixtures_dir=config.fixtures_dir,
            seed=self.seed,
            max_examples=config.max_examples,
            database=config.database,
            examples=config.regressions.get(prop.id, ()),
            options=config.options(self.known_faults, self.emit),
        )

    def finished(self, outcome: Outcome) -> None:
        tell_finished(self.emit, self.known_faults, outcome)


def tell_finished(emit: Emitter, known_faults: set[str], outcome: Outcome) -> None:
    """Note the target faults a property reported and tell the handlers it finished (a scheduler
    that ran it elsewhere calls this when it keeps the result)."""
    for key in sorted(target_faults(outcome) - known_faults):
        emit(TargetFault(outcome.prop, key))
    known_faults.update(target_faults(outcome))
    emit(PropertyFinished(outcome))


def run(
    props: Sequence[Property],
    config: RunConfig,
    *,
    target: Target | None = None,
    handlers: Iterable[Handler | Any] = (),
) -> GateReport:
    """Every property in ``props``, in order (``config.jobs`` worker processes, or ``target`` in this
    one). An interrupt, the deadline or ``max_failures`` failed properties end the run early: the rest
    are ``never-run``, and the report says why. Handlers get every event, ``RunFinished`` last."""
    emit = Emitter.of(handlers)
    config = attrs.evolve(config, seed=config.run_seed())
    assert config.seed is not None
    emit(RunStarted(config.seed, config.profile.name, tuple(p.id for p in props)))
    if config.jobs > 1:
        from ctxmodel.parallel import run_parallel

        if config.target_spec is None:
            raise ValueError("a run over worker processes needs config.target_spec")
        report = run_parallel(props, config, emit)
    else:
        if target is None:
            raise ValueError("a run in this process needs its target")
        with _CtrlC() as ctrl_c:
            report = _run_serial(Session(target, config, emit), props, ctrl_c)
    emit(RunFinished(report))
    return report


class _CtrlC:
    """Notes a Ctrl-C while the run is in progress, whoever catches the KeyboardInterrupt it raises."""

    def __init__(self) -> None:
        self.pressed = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _run_serial(session: Session, props: Sequence[Property], ctrl_c: _CtrlC) -> GateReport:
    config = session.config
    outcomes: list[Outcome] = []
    started = time.monotonic()
    stopped = ""
    for prop in props:
        stopped = (
            stopped or past_deadline(started, config.deadline)
            or too_many_failures(outcomes, config.max_failures, config.baseline_kinds)
            or faulting_target(outcomes)
        )
        if stopped:
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            continue
        try:
            outcome = session.execute(prop)
        except KeyboardInterrupt:
            stopped = "interrupted"
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            continue
        if ctrl_c.pressed:
            # The interrupt reached code that swallowed it (a strategy, Hypothesis, the target): the
            # run stops all the same, and a property it broke did not run.
            stopped = "interrupted"
            if outcome.status == "error":
                outcome = Outcome(prop, "never-run", reason=stopped)
        session.finished(outcome)
        outcomes.append(outcome)
    return GateReport(tuple(outcomes), session.seed, config.profile.name, stopped)


def past_deadline(started: float, deadline: float | None) -> str:
    """Why no further property starts, when the run's deadline (seconds from ``started``) is over."""
    if deadline is not None and time.monotonic() - started >= deadline:
        return f"the run's deadline of {deadline:g} s passed"
    return ""


def too_many_failures(
    outcomes: Iterable[Outcome], max_failures: int | None, baseline_kinds: Collection[str] = ()
) -> str:
    """Why no further property starts, when the properties before it failed ``max_failures`` times
    (a property failing only on ``baseline_kinds`` not counted: see ``RunConfig``)."""
    failed = sum(o.status == "failed" and any(k.key not in baseline_kinds for k in o.kinds) for o in outcomes)
    if max_failures is not None and failed >= max_failures:
        return f"{max_failures} failed propert{'y' if max_failures == 1 else 'ies'} (--max-failures)"
    return ""


def faulting_target(outcomes: Sequence[Outcome]) -> str:
    """Why no further property starts: the last property judged nothing, every input it drew having
    met a fault reported before. A target that faults on every call would make every later property
    wait out each input (a hang costs its timeout each time) to judge nothing."""
    if outcomes and outcomes[-1].status == "not-judged":
        return f"the target met a known fault on every input of {outcomes[-1].prop.id}"
    return ""


def target_faults(outcome: Outcome) -> set[str]:
    """The target-fault kinds an outcome reports, which no later property of the run reports again."""
    return {k.key for k in outcome.kinds if k.key.startswith("target-")}


def exit_code(outcomes: Iterable[Outcome]) -> int:
    """Contract §9: 1 when a property failed (its fixtures are written) or judged nothing because every
    input met a target fault reported before (the fault's fixture is written); 2 when a property could not
    run at all (a harness or strategy problem, no fixture); else 0. Warnings fail only a strict run,
    where they are failures already."""
    statuses = {o.status for o in outcomes}
    if statuses & {"failed", "not-judged"}:
        return exitcodes.FAILED
    if "error" in statuses:
        return exitcodes.USAGE
    return exitcodes.OK
