"""Every private Hypothesis hook ctxmodel relies on, in one place (``tests/unit/test_hypothesis_hooks.py``
fails when a Hypothesis release renames one).

They exist for needs the public API does not meet: a test function built at run time needs its own
database key (the body's source is shared by every property and target), its own seed without
``hypothesis.seed()`` switching the database off (it sets ``database=None``), and a run must be
replayable from its seed alone, which Hypothesis's mining of literals from loaded modules breaks; a
strategy needs a flag that lives exactly one test case, and a campaign the events of the example
running now.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "example_events",
    "first_ask_in_test_case",
    "generating",
    "search_on_after_a_failure",
    "set_database_key",
    "set_seed",
    "stop_shrinking",
    "without_local_constants",
]

#: The runner ``search_on_after_a_failure`` last saw, for ``generating``.
_RUNNER: list[Any] = []


def generating() -> bool:
    """Whether the test call now running is a generated example, not a shrink step: after the first
    failure a search that goes on generating would otherwise count its new examples as shrinks."""
    return bool(_RUNNER) and getattr(_RUNNER[0], "_current_phase", "") == "generate"


def stop_shrinking() -> bool:
    """End the shrink phase once the test call now running returns, keeping the smallest input each
    kind has reached; False when no shrink is under way (or the hook is gone).

    A shrink step whose input hangs costs the target's whole timeout and a restart, and Hypothesis
    bounds a shrink only by its five-minute limit: with a 30-second timeout that is ten steps, with a
    short one a hundred. Its own deadline is what it checks after every test call, so the gate ends a
    shrink by moving the deadline into the past (the notice Hypothesis prints then goes to the
    gate's silent reporter). Only ``search_on_after_a_failure`` knows the runner.
    """
    if not _RUNNER or getattr(_RUNNER[0], "finish_shrinking_deadline", None) is None:
        return False
    _RUNNER[0].finish_shrinking_deadline = float("-inf")
    return True


def first_ask_in_test_case(name: str) -> bool:
    """True the first time ``name`` is asked in the running test case; False after that, and outside
    a test case.

    The cell strategies refuse one draw per test case (``ctxmodel.strategies.cells.fresh``), so that
    Hypothesis records a discard and its mutator skips replaying the example. That needs a flag that
    lives exactly as long as one test case, which the public API does not offer; it rides on the
    test case's build context as an attribute of its own.
    """
    from hypothesis.control import current_build_context
    from hypothesis.errors import InvalidArgument

    try:
        context: Any = current_build_context()
    except InvalidArgument:
        return False
    flag = f"_ctxmodel_{name}"
    if getattr(context, flag, False):
        return False
    setattr(context, flag, True)
    return True


def example_events() -> set[str]:
    """The ``event()`` labels of the example running now, as ``NAME`` or ``NAME: VALUE``.

    Hypothesis reports events only in the statistics at the end of a run; a campaign counting them
    per slice as they happen reads them where ``event()`` writes them, the build context's data. No
    running example, or a Hypothesis that moved the attribute, reads as no events rather than a crash.
    """
    from hypothesis.control import current_build_context

    try:
        events = current_build_context().data.events
    except Exception:
        return set()
    return {k if v in ("", None) else f"{k}: {v}" for k, v in dict(events).items()}


def set_database_key(test: Any, key: str) -> None:
    """Distinct database entries per property and target: in a shared database one target's stored
    failures must not be replayed (and deleted as fixed) by a run against another."""
    test._hypothesis_internal_add_digest = key.encode()


def set_seed(test: Any, seed: int) -> None:
    """``hypothesis.seed()`` without its side effect of ``database=None``."""
    test._hypothesis_internal_use_seed = seed


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Keep Hypothesis from mining literals out of whatever modules happen to be imported.

    Hypothesis draws, now and then, constants collected from every local module in ``sys.modules``,
    so the same seed drew different examples depending on what ran before in the process, and a
    verdict could change with the order properties ran in. The local pool is empty for the duration;
    Hypothesis's own global constants stay. When the hook is missing this does nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module
        yield
        return
    getter = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if getter is None or cache is None:  # pragma: no cover - a Hypothesis without constant mining
        yield
        return
    empty = type(providers._local_constants)()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = getter
        cache.cache.clear()


@contextlib.contextmanager
def search_on_after_a_failure(calls: int, enough: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """Keep generating after the first failure until ``calls`` test calls are made (the property's
    example budget), not only Hypothesis's own few, or until ``enough()`` says what was found is all
    the caller looks for.

    Hypothesis stops looking once it has a bug and either ten more calls went by fruitless or ten
    seconds passed, then shrinks what it has. That is right for a unit test and wrong for a gate:
    a target with three bugs in one property showed one, and a slow target whose first input failed
    had its property judge one example. Hypothesis's own limits (valid examples, invalid inputs, an
    exhausted search tree) still end generation. When the hook is missing this does nothing.

    The same goes for a failure replayed from the example database: Hypothesis ends the run at once
    when the database gave back an input it had already shrunk, so a property with two kinds, one of
    them stored, would judge one example on every later run and never meet the other again.
    """
    try:
        from hypothesis.internal.conjecture import engine as conjecture
    except ImportError:  # pragma: no cover - a Hypothesis without the module
        yield
        return
    runner = getattr(conjecture, "ConjectureRunner", None)
    original = getattr(runner, "should_generate_more", None)
    exhausted = getattr(runner, "_ConjectureRunner__tree_is_exhausted", None)
    base = getattr(conjecture, "INVALID_THRESHOLD_BASE", None)
    per_valid = getattr(conjecture, "INVALID_PER_VALID", None)
    if runner is None or original is None or exhausted is None or base is None or per_valid is None:
        yield  # pragma: no cover - a Hypothesis that renamed them: its own stopping rule stays
        return

    def should_generate_more(self: Any) -> bool:
        _RUNNER[:] = [self]
        if self.interesting_test_cases and enough():
            return False
        if original(self):
            return True
        if not self.interesting_test_cases:
            return False  # stopped by its own limits, with nothing found
        if (
            self.valid_test_cases >= self.settings.max_examples
            or self.invalid_test_cases + self.overrun_test_cases > base + per_valid * self.valid_test_cases
            or exhausted(self)
        ):
            return False
        return bool(self.call_count < calls)

    generate: Callable[[Any], None] | None = getattr(runner, "generate_new_test_cases", None)

    def generate_after_replayed_failures(self: Any) -> None:
        assert generate is not None
        replayed = self.interesting_test_cases
        if not replayed or enough():
            generate(self)
            return
        # Hypothesis skips generation when the database gave back failures. Searched as if none
        # had been met yet, then the replayed ones kept over a fresh meeting of the same kind
        # (they are shrunk already; the fresh one is not).
        self.interesting_test_cases = {}
        try:
            generate(self)
        finally:
            self.interesting_test_cases = {**self.interesting_test_cases, **replayed}

    runner.should_generate_more = should_generate_more
    # Read as False while this is active: a replayed shrunk failure no longer ends the run unsearched.
    reused = runner.__dict__.get("reused_previously_shrunk_test_case")
    runner.reused_previously_shrunk_test_case = property(lambda self: False, lambda self, value: None)
    if generate is not None:
        runner.generate_new_test_cases = generate_after_replayed_failures
    try:
        yield
    finally:
        runner.should_generate_more = original
        if generate is not None:
            runner.generate_new_test_cases = generate
        if reused is None:
            del runner.reused_previously_shrunk_test_case
        else:  # pragma: no cover - a Hypothesis that made it a class attribute
            runner.reused_previously_shrunk_test_case = reused
        _RUNNER.clear()
