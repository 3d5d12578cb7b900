"""The engine: a run of properties against a target, told as events (contract §8, §9).

Every way of running properties goes through here: ``ctxmodel check`` (one process, or ``--jobs N``
worker processes), the pytest plugin (one property per test item, one ``Session`` for the pytest
session), and the baseline and benchmark runners. What a run is asked to do is one ``RunConfig``;
what it found is one ``GateReport``; everything in between is an event (``ctxmodel.events``) handed
to the run's handlers: the text report, the ``--coverage`` table, the heartbeat, the plugin's items.
A property's own run (one Hypothesis test, its kinds, shrinking, fixtures) is ``gate.run_property``.

The run's configuration, its report and the rules that stop it are ``ctxmodel.runs`` (named here
too). What a run carries from one property to the next is the set of target faults already reported: a
later property rejects the inputs that meet one rather than report it again (``RunOptions``). The
schedulers differ only in when a property runs; the kinds, fixtures and events are the same.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ctxmodel import gate
from ctxmodel.events import Emitter, Handler, PropertyStarted, RunFinished, RunStarted
from ctxmodel.properties.catalogue import Property
from ctxmodel.results import GateReport, Outcome, exit_code, judged_nothing, target_faults
from ctxmodel.runs import (
    RunConfig,
    faulting_target,
    past_deadline,
    run_seed_of,
    tell_finished,
    too_many_failures,
)
from ctxmodel.targets.base import Target

__all__ = [
    "GateReport",
    "RunConfig",
    "Session",
    "exit_code",
    "faulting_target",
    "judged_nothing",
    "past_deadline",
    "run",
    "run_seed_of",
    "target_faults",
    "tell_finished",
    "too_many_failures",
]


@attrs.define
class Session:
    """Properties run one after another on one target, each told the faults reported before it.

    ``ctxmodel check`` runs its properties through one session; the pytest plugin keeps one for the
    pytest session and runs one property per test item through it."""

    target: Target
    config: RunConfig
    emit: Emitter = attrs.field(factory=Emitter)
    known_faults: set[str] = attrs.field(factory=set)
    #: When the run began (``time.monotonic()``), for its deadline.
    started: float = attrs.field(factory=time.monotonic)

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
        return gate.run_property(prop, self.target, config, config.options(self.known_faults, self.emit, self.started))

    def finished(self, outcome: Outcome) -> None:
        tell_finished(self.emit, self.known_faults, outcome)


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
        with _CtrlC() as ctrl_c:
            report = run_parallel(props, config, emit)
        if ctrl_c.pressed:
            report = attrs.evolve(report, stopped=ctrl_c.reason)
    else:
        if target is None:
            raise ValueError("a run in this process needs its target")
        with _CtrlC() as ctrl_c:
            report = _run_serial(Session(target, config, emit), props, ctrl_c)
    emit(RunFinished(report))
    return report


class _CtrlC:
    """Notes a Ctrl-C or a SIGTERM (what a CI job's timeout sends) while the run is in progress,
    whoever catches the KeyboardInterrupt it raises: both end the run the same way, with what was
    found written and the summary printed."""

    def __init__(self) -> None:
        self.pressed = False
        self.signal = ""
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        self.pressed = True
        self.signal = signal.Signals(signum).name
        raise KeyboardInterrupt

    @property
    def reason(self) -> str:
        return "interrupted" + (" (SIGTERM)" if self.signal == "SIGTERM" else "")

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
            for signum, default in defaults.items():
                if signal.getsignal(signum) is default:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)


def _run_serial(session: Session, props: Sequence[Property], ctrl_c: _CtrlC) -> GateReport:
    config = session.config
    outcomes: list[Outcome] = []
    started = session.started
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
            stopped = ctrl_c.reason
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            continue
        if ctrl_c.pressed:
            # The interrupt reached code that swallowed it (a strategy, Hypothesis, the target): the
            # run stops all the same, and a property it broke did not run.
            stopped = ctrl_c.reason
            if outcome.status == "error":
                outcome = Outcome(prop, "never-run", reason=stopped)
        elif outcome.cut:
            stopped = past_deadline(started, config.deadline) or outcome.cut
        session.finished(outcome)
        outcomes.append(outcome)
    return GateReport(tuple(outcomes), session.seed, config.profile.name, stopped)


