"""Every private Hypothesis name ``ctxmodel.hypothesis_hooks`` relies on still exists: a Hypothesis
release that renames one fails here, not silently in a run that stops searching or loses its seed."""

from __future__ import annotations

from hypothesis import control, event, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import engine as conjecture
from hypothesis.internal.conjecture import providers

from ctxmodel import hypothesis_hooks


def test_the_private_names_exist() -> None:
    runner = conjecture.ConjectureRunner
    assert callable(runner.should_generate_more)
    assert callable(runner._ConjectureRunner__tree_is_exhausted)  # type: ignore[attr-defined]
    assert isinstance(conjecture.INVALID_THRESHOLD_BASE, int) and isinstance(conjecture.INVALID_PER_VALID, int)
    assert callable(providers._get_local_constants) and hasattr(providers, "CONSTANTS_CACHE")
    assert callable(control.current_build_context)


def test_a_flag_lives_one_test_case_and_the_events_are_those_of_the_running_example() -> None:
    seen: list[tuple[bool, bool, set[str]]] = []

    @settings(max_examples=5, database=None)
    @given(st.integers())
    def asks(n: int) -> None:
        event("drawn", str(n))
        first = hypothesis_hooks.first_ask_in_test_case("probe")
        seen.append((first, hypothesis_hooks.first_ask_in_test_case("probe"), hypothesis_hooks.example_events()))

    asks()
    assert seen and all(first and not again for first, again, _ in seen), seen
    assert all(len([e for e in events if e.startswith("drawn: ")]) == 1 for _, _, events in seen), seen
    assert not hypothesis_hooks.first_ask_in_test_case("probe")  # outside a test case
    assert hypothesis_hooks.example_events() == set()


def test_the_search_goes_on_after_a_failure_and_is_restored() -> None:
    calls: list[int] = []
    original = conjecture.ConjectureRunner.should_generate_more

    @settings(max_examples=80, database=None, report_multiple_bugs=True)
    @given(st.integers())
    def always_fails(n: int) -> None:
        calls.append(n)
        raise AssertionError

    with hypothesis_hooks.search_on_after_a_failure(80):
        try:
            always_fails()
        except AssertionError:
            pass
    assert conjecture.ConjectureRunner.should_generate_more is original
    searched = len(calls)
    calls.clear()
    try:
        always_fails()
    except AssertionError:
        pass
    assert searched > len(calls), (searched, len(calls))


def test_a_shrink_told_to_stop_ends_after_the_call_that_said_so() -> None:
    steps: list[int] = []

    @settings(max_examples=40, database=None)
    @given(st.lists(st.integers(), min_size=30))
    def fails(xs: list[int]) -> None:
        if not hypothesis_hooks.generating():
            steps.append(len(xs))
            if len(steps) == 3:
                assert hypothesis_hooks.stop_shrinking()
        raise AssertionError

    assert not hypothesis_hooks.stop_shrinking()  # no shrink under way
    with hypothesis_hooks.search_on_after_a_failure(40):
        try:
            fails()
        except AssertionError:
            pass
    # three shrink steps, then only Hypothesis's final replay of the smallest input
    assert 3 <= len(steps) <= 4, steps
