"""The stateful agent-loop model: passes on the reference, fails each of three broken
targets whose bugs only a sequence of steps reaches, printing that sequence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from ctxmodel.fuzz.agent_loop import AgentLoop, LoopFailure, agent_loop_machine
from ctxmodel.policies import resolve
from ctxmodel.targets.base import Target
from ctxmodel.targets.spec import open_target


@pytest.fixture
def open_spec() -> Iterator[list[Target]]:
    opened: list[Target] = []
    yield opened
    for target in opened:
        target.close()


def _machine(spec: str, opened: list[Target]) -> type[AgentLoop]:
    target = open_target(spec)
    opened.append(target)
    return agent_loop_machine(
        target, policies=resolve(target.description.policies), tokenizer=target.description.tokenizer
    )


def _settings(examples: int, *, shrink: bool) -> settings:
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        stateful_step_count=30,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


def test_reference_passes(open_spec: list[Target]) -> None:
    machine = seed(7)(_machine("reference", open_spec))
    run_state_machine_as_test(machine, settings=_settings(60, shrink=False))
    # It really played sessions: the machine saw no failure and recorded none.
    assert machine.failures == []


# Seeds fixed so the run is repeatable (derandomized); each finds its bug within the example budget.
BROKEN = [
    # condense or truncate, then rewind past the summary/marker: the target keeps hiding.
    # (a stale tag that hides every message also empties the request, which the API refuses)
    ("broken_loop_rewind", 0, "state.rewind(", 1, "effective.visibility|request.oracle"),
    # two truncations: the second re-tags the first one's marker.
    pytest.param("broken_loop_marker", 1, "state.recover(", 2, "recover.tagging-rules", marks=pytest.mark.slow),
    # a degradation, then any later recovery: the degraded block grows.
    # (the second notice can also leave the call over budget: either property is the bug showing)
    pytest.param("broken_loop_degrade", 0, "state.recover(", 2, "recover.degraded-shrink|recover.fits-or-converges",
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("module", "seed_value", "step", "times", "finding"), BROKEN)
def test_broken_targets_fail_with_their_step_sequence(
    open_spec: list[Target], module: str, seed_value: int, step: str, times: int, finding: str
) -> None:
    machine = seed(seed_value)(_machine(f"python:tests.targets.{module}", open_spec))
    with pytest.raises(LoopFailure) as caught:
        run_state_machine_as_test(machine, settings=_settings(300, shrink=False))
    # The loop judges with the catalogue: its failure is that property's, replayable by value.
    failed = (caught.value.prop.id, *caught.value.also)
    assert set(finding.split("|")) & set(failed), (failed, str(caught.value))
    printed = "\n".join(getattr(caught.value, "__notes__", []))
    steps = [line.strip() for line in printed.splitlines() if line.strip().startswith("state.")]
    # Hypothesis printed the sequence; the bug needed several steps, including the decisive ones.
    assert len(steps) >= 3, printed
    assert sum(s.startswith(step) for s in steps) >= times, printed
    recorded = machine.failures[-1][1]
    assert recorded[0].startswith("user_starts(")
    assert len(recorded) >= 2


@pytest.mark.slow
def test_rewind_bug_shrinks_to_a_short_sequence(open_spec: list[Target]) -> None:
    machine = seed(1)(_machine("python:tests.targets.broken_loop_rewind", open_spec))
    # Each kind is its own failure: the stale tag shows as a visibility kind and, where it hides
    # every message, as an empty request; Hypothesis reports both.
    with pytest.raises((LoopFailure, ExceptionGroup)) as info:
        run_state_machine_as_test(machine, settings=_settings(100, shrink=True))
    if isinstance(info.value, ExceptionGroup):
        assert all(isinstance(e, LoopFailure) for e in info.value.exceptions)
    failure, steps = machine.failures[-1]
    # The minimal session: a start, something that hides (condense or recover), the rewind.
    assert steps[-1].startswith("rewind(")
    assert any(s.startswith(("condense", "recover")) for s in steps)
    assert len(steps) <= 8, steps
    assert failure.op in ("effective", "request")


def test_the_loop_and_the_catalogue_give_one_recorded_exchange_the_same_verdict(open_spec: list[Target]) -> None:
    """The loop has no judge of its own: the same recover exchange gets the same verdict from the
    catalogue check (what ``ctxmodel check`` and ``replay`` run) and from the loop."""
    from ctxmodel.gate import judge
    from ctxmodel.properties.registry import select

    text = " ".join(["alpha beta gamma delta"] * 120)
    messages = [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "next"},
    ]
    params = {"messages": messages, "contextWindow": 700, "maxTokens": 200, "systemPrompt": ""}
    for spec in ("reference", "python:tests.targets.broken_recover:DeletesHidden",
                 "python:tests.targets.broken_recover:TagsFirstVisible"):
        target = open_target(spec)
        open_spec.append(target)
        policies = resolve(target.description.policies)
        catalogue = [
            p.id for p in select(ops=("recover",))
            if not p.warning and judge(p, target, dict(params), policies=policies, tokenizer="zoo").failed
        ]
        machine = agent_loop_machine(target, policies=policies, tokenizer="zoo")
        loop = machine()
        try:
            loop._judge("recover", dict(params))
            verdict = None
        except LoopFailure as failure:
            verdict = failure.prop.id
        assert verdict == (catalogue[0] if catalogue else None), (spec, catalogue, verdict)


@pytest.mark.slow
def test_a_loop_failure_is_an_ordinary_fixture_that_replays(open_spec: list[Target], tmp_path: Path) -> None:
    from ctxmodel.fixtures import load_fixture
    from ctxmodel.fuzz.agent_loop import run_loop_slice
    from ctxmodel.gate import replay

    target = open_target("python:tests.targets.broken_loop_marker")
    open_spec.append(target)
    outcome = run_loop_slice(
        target, policies=resolve(target.description.policies), tokenizer=target.description.tokenizer,
        settings=_settings(300, shrink=False), seed=1, fixtures_dir=tmp_path,
    )
    assert outcome.fixture is not None, "the loop found nothing"
    fixture = load_fixture(outcome.fixture)
    assert fixture.property.startswith("recover.") and fixture.kind.startswith(fixture.property)
    assert replay(fixture, target).failed, "the loop's fixture does not replay as its property"
    assert not replay(fixture, open_target("reference")).failed
