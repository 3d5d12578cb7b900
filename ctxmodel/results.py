"""What a run found and what it means: the kinds, each property's outcome, the run's report, and the
exit-code rules of contract §9.

Every layer reads these (the property runner that makes them, the engine's schedulers, the event
handlers, the reporters, the baseline, the fuzz campaign), so they live apart from all of them and
import none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from ctxmodel import exitcodes
from ctxmodel.properties.catalogue import Finding, Property

__all__ = [
    "GateReport",
    "Kind",
    "Outcome",
    "Status",
    "exit_code",
    "finding_key",
    "judged_nothing",
    "target_faults",
    "verdict_code",
]

#: ``not-judged``: every input the property drew met a target fault an earlier property reported, so
#: it judged nothing; that is not a pass (it fails the run like the fault).
#: ``cut``: it judged examples and met no kind before an interrupt or the deadline stopped it.
Status = Literal["passed", "failed", "skipped", "error", "never-run", "not-judged", "cut"]


@attrs.frozen
class Kind:
    """One distinct finding of a run: its kind, its minimal input and what the target did there."""

    key: str
    finding: Finding
    params: dict[str, Any]
    calls: tuple[Any, ...]
    #: The example (1-based) at which this kind was first met.
    first_example: int
    fixture: Path | None = None

    @property
    def severity(self) -> str:
        return self.finding.severity


@attrs.frozen
class Outcome:
    """One property's run against one target: how it ended and every kind it met."""

    prop: Property
    status: Status
    #: Examples generated (shrink steps are counted apart), ``rejected`` among them.
    examples: int = 0
    shrink_steps: int = 0
    #: Distinct failing kinds, each with its minimal input and fixture.
    kinds: tuple[Kind, ...] = ()
    #: Distinct warnings, each with its input (and its fixture).
    warned: tuple[Kind, ...] = ()
    warnings_total: int = 0
    reason: str = ""
    seconds: float = 0.0
    flaky: bool = False
    #: Kinds of a baseline this property still fails on (``ctxmodel.baseline``): not failures of the
    #: run, and not shrunk again when their baseline fixture already holds a minimal input.
    known: tuple[str, ...] = ()
    #: Examples not judged because they met a target fault already reported (``RunOptions.known_faults``).
    rejected: int = 0
    #: Why the property's run was cut short (an interrupt, the run's deadline), or "".
    cut: str = ""

    @property
    def judged(self) -> int:
        return self.examples - self.rejected

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(k.finding for k in self.kinds)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(k.finding for k in self.warned)

    @property
    def fixtures(self) -> tuple[Path, ...]:
        return tuple(k.fixture for k in (*self.kinds, *self.warned) if k.fixture is not None)


def finding_key(prop: Property, finding: Finding) -> str:
    """A target fault is one kind whichever property met it; anything else is the property's."""
    if finding.code.startswith("target-"):
        return finding.code
    return f"{prop.id}/{finding.code}" if finding.code else prop.id


@attrs.frozen
class GateReport:
    """A whole run: every property's outcome, in property order, and how to run it again."""

    outcomes: tuple[Outcome, ...]
    seed: int
    profile: str
    #: Why the run stopped early, if it did (an interrupt, the deadline, ``--max-failures``).
    stopped: str = ""


def target_faults(outcome: Outcome) -> set[str]:
    """The target-fault kinds an outcome reports, which no later property of the run reports again."""
    return {k.key for k in outcome.kinds if k.key.startswith("target-")}


def judged_nothing(outcomes: Sequence[Outcome]) -> bool:
    """A run stopped (by its deadline or an interrupt) before any property judged an example: it
    says nothing about the target, so it must not pass."""
    return bool(outcomes) and not any(o.judged for o in outcomes) and \
        any(o.status in ("never-run", "cut") for o in outcomes)


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """The exit code of a run of the engine (``check``, the plugin's session): see ``verdict_code``."""
    statuses = {o.status for o in outcomes}
    return verdict_code(
        failed=bool(statuses & {"failed", "not-judged"}), unrunnable="error" in statuses,
        judged_nothing=judged_nothing(outcomes),
    )


def verdict_code(*, failed: bool, unrunnable: bool, judged_nothing: bool) -> int:
    """Contract §9, for every runner (a check, a fuzz campaign): 1 when a property failed (its fixtures
    are written) or judged nothing because every input met a target fault reported before (the fault's
    fixture is written); 2 when a property could not run at all (a harness or strategy problem, no
    fixture) or the run stopped before any property judged an example (it says nothing of the
    target); else 0. Warnings fail only a strict run, where they are failures already."""
    if failed:
        return exitcodes.FAILED
    if unrunnable or judged_nothing:
        return exitcodes.USAGE
    return exitcodes.OK
