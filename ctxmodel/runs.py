"""What a run is asked to do, what it found, and the rules that stop it and give its exit code
(contract §8, §9): shared by the engine's schedulers (one process, or worker processes) and by
everything that reads a run's result.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.events import Emitter, PropertyFinished, TargetFault
from ctxmodel.profiles import Profile
from ctxmodel.results import Outcome, target_faults

__all__ = [
    "RunConfig",
    "RunOptions",
    "faulting_target",
    "past_deadline",
    "run_seed_of",
    "tell_finished",
    "too_many_failures",
]


def _frozen(value: Collection[str]) -> frozenset[str]:
    return frozenset(value)


def _regressions(value: Mapping[str, Sequence[dict[str, Any]]] | None) -> dict[str, tuple[dict[str, Any], ...]]:
    return {key: tuple(examples) for key, examples in (value or {}).items()}


@attrs.frozen
class RunOptions:
    """How a run treats what it finds: ``strict`` fails on warnings (contract §8); ``known_faults``
    are target-fault kinds already reported by an earlier property of the run, which a later
    property does not report again (it goes on with other inputs). ``known_kinds`` are a baseline's
    kinds whose fixture still reproduces: met, they are noted and neither raised nor shrunk, so the
    search goes on looking for kinds that are new."""

    strict: bool = False
    known_faults: frozenset[str] = frozenset()
    known_kinds: frozenset[str] = frozenset()
    #: Where the property's events go (``ctxmodel.events``): examples, kinds met, fixtures, heartbeats.
    emit: Emitter = attrs.field(factory=Emitter)
    #: Called with the key of every finding the body meets, shrink steps and known faults included:
    #: a scheduler's bookkeeping (a run that met none of a set of keys would have gone the same way
    #: had they been known faults), not an event.
    seen: Callable[[str], None] | None = None
    #: Drop the messages a failure does not need once Hypothesis has shrunk it (``ctxmodel.minimize``).
    minimize: bool = True
    #: ``time.monotonic()`` after which the property stops between two test calls (the run's
    #: deadline), shrinking included; what it found by then is written and the outcome says it was cut.
    stop_at: float | None = None
    #: Given the kinds met so far, whether the search has found all it looks for (a witness test
    #: asking for one kind); by default a property searches its whole example budget.
    enough: Callable[[frozenset[str]], bool] | None = None
    #: Asked between two test calls: once true, the search ends; a property that met nothing stops
    #: there (``cut``), one that met kinds goes on to shrink them (a campaign's stop request, whose
    #: hard end is ``stop_at``).
    stop_search: Callable[[], bool] | None = None



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
    #: Drop the messages a failure does not need after the shrink (``ctxmodel.minimize``).
    minimize: bool = True
    #: The tokenizer the checks count with; ``None``: the one the target declares.
    tokenizer: str | None = None

    def run_seed(self) -> int:
        return run_seed_of(self.seed, self.profile)

    def options(self, known_faults: Collection[str], emit: Emitter, started: float | None = None) -> RunOptions:
        """A property's options; ``started`` (``time.monotonic()``) is when the run began, from which
        its deadline bounds every property's run, shrinking included."""
        stop_at = started + self.deadline if started is not None and self.deadline is not None else None
        return RunOptions(
            strict=self.strict, known_faults=frozenset(known_faults), known_kinds=self.known_kinds, emit=emit,
            minimize=self.minimize, stop_at=stop_at,
        )


def run_seed_of(seed: int | None, profile: Profile) -> int:
    """The seed a run uses: the one asked for, else 0 for a deterministic profile, else a fresh one
    (printed at the end of every run so that it can be repeated)."""
    return seed if seed is not None else (0 if profile.deterministic else random.getrandbits(32))


def tell_finished(emit: Emitter, known_faults: set[str], outcome: Outcome) -> None:
    """Note the target faults a property reported and tell the handlers it finished (a scheduler
    that ran it elsewhere calls this when it keeps the result)."""
    for key in sorted(target_faults(outcome) - known_faults):
        emit(TargetFault(outcome.prop, key))
    known_faults.update(target_faults(outcome))
    emit(PropertyFinished(outcome))


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


