"""What a campaign has found so far on this machine: each unit's examples and labels, the kinds it
kept (one record each), the timeline, why it stopped; and the ``CampaignResult`` made from them.

The scheduler writes here and the handlers (progress, report, Redis) read here: the one place a
campaign's figures live, so the live display, the report written at every kind and the final
result cannot disagree. The exit code follows ``check``'s rules (``results.verdict_code``).
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ctxmodel.fuzz.results import CampaignResult, FailureRecord, PropertyStats
from ctxmodel.results import Kind, verdict_code

__all__ = ["Ledger", "UnitSpec", "UnitState", "iso", "record_of"]


@attrs.frozen
class UnitSpec:
    id: str
    op: str
    clause: str
    summary: str
    #: Why the unit does not run on this target (a missing op), or ``None``.
    skipped: str | None = None


@attrs.define
class UnitState:
    spec: UnitSpec
    examples: int = 0
    events: dict[str, int] = attrs.field(factory=dict)
    #: Distinct kinds this unit met (claimed by this machine).
    failures: int = 0
    error: str | None = None


def iso(wall: float) -> str:
    stamp = datetime.datetime.fromtimestamp(wall, datetime.UTC).replace(microsecond=0)
    return stamp.isoformat().replace("+00:00", "Z")


def record_of(kind: Kind, unit: UnitSpec, op: str, *, worker: int, found_at: float, examples_until: int,
              shrunk: bool, steps: Sequence[str] = ()) -> FailureRecord:
    """The one record of a kind a slice met: what the report and a Redis campaign keep of it."""
    judged = [c for c in kind.calls if c.op == op] or list(kind.calls)
    last = judged[-1] if judged else None
    return FailureRecord(
        property=unit.id, op=op, clause=unit.clause, findings=(kind.finding.message,), params=kind.params,
        observed=None if last is None else last.result, target_failure=None if last is None else last.failure,
        worker=worker, found_at=found_at, examples_until_failure=examples_until,
        fixture=None if kind.fixture is None else str(kind.fixture), steps=tuple(steps), shrunk=shrunk,
        kind=kind.key,
    )  # fmt: skip


@attrs.define
class Ledger:
    target_info: dict[str, Any]
    policies: dict[str, str]
    database: str
    workers: int
    seed: int
    started_wall: float
    units: list[UnitSpec]
    states: dict[str, UnitState] = attrs.field(init=False)
    #: One record per kind this machine kept, in the order met.
    failures: list[FailureRecord] = attrs.field(factory=list)
    #: Every kind the campaign holds: kept here, or claimed by another machine of a Redis campaign.
    known: set[str] = attrs.field(factory=set)
    timeline: list[tuple[float, int, int]] = attrs.field(factory=list)
    stopped: str = "running"
    #: Troubles of the whole run (a worker that could not open the target, Redis not answering).
    fatal: list[str] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.states = {u.id: UnitState(u) for u in self.units}

    def examples(self) -> int:
        return sum(s.examples for s in self.states.values())

    def tally(self, unit: str, examples: int, labels: Mapping[str, int]) -> None:
        state = self.states[unit]
        state.examples += examples
        for name, count in labels.items():
            state.events[name] = state.events.get(name, 0) + count

    def machine(self, finished: float | None = None) -> dict[str, Any]:
        """This run as one of a Redis campaign's machines."""
        import socket

        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "workers": self.workers,
            "seed": self.seed,
            "started": iso(self.started_wall),
            "startedWall": self.started_wall,
            "finishedWall": finished,
            "stopped": self.stopped,
            "examples": self.examples(),
            "kinds": [f.key for f in self.failures],
            "properties": [u.id for u in self.units if u.skipped is None],
        }

    def result(self, now: float) -> CampaignResult:
        import hypothesis

        import ctxmodel

        duration = max(now - self.started_wall, 1e-9)
        props = tuple(
            PropertyStats(
                id=s.spec.id, op=s.spec.op, clause=s.spec.clause, summary=s.spec.summary, examples=s.examples,
                events=dict(s.events), failures=s.failures, skipped=s.spec.skipped or s.error,
            )
            for s in self.states.values()
        )  # fmt: skip
        # A campaign's stop signal is how it is meant to end: an interrupted campaign exits with its
        # verdict, not 130.
        ran = [s for s in self.states.values() if not s.spec.skipped]
        code = verdict_code(
            failed=bool(self.failures), unrunnable=any(s.error for s in self.states.values()),
            judged_nothing=bool(ran) and not any(s.examples for s in ran),
        )
        return CampaignResult(
            target=self.target_info,
            policies=self.policies,
            database=self.database,
            workers=self.workers,
            seed=self.seed,
            started=iso(self.started_wall),
            finished=iso(now),
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
