"""The stateful agent-loop model (issue 6): passes on the reference, fails each of three broken
targets whose bugs only a sequence of steps reaches, printing that sequence."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from ctxmodel.fuzz.agent_loop import LoopFailure, agent_loop_machine, check_recovery
from ctxmodel.policies import resolve
from ctxmodel.targets.base import Target
from ctxmodel.targets.spec import open_target


@pytest.fixture
def open_spec() -> Iterator[list[Target]]:
    opened: list[Target] = []
    yield opened
    for target in opened:
        target.close()


def _machine(spec: str, opened: list[Target]) -> type:
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
    ("broken_loop_rewind", 0, "state.rewind(", 1, "effective:"),
    # two truncations: the second re-tags the first one's marker.
    ("broken_loop_marker", 1, "state.recover(", 2, "marker of an earlier truncation"),
    # a degradation, then any later recovery: the degraded block grows.
    ("broken_loop_degrade", 0, "state.recover(", 2, "contract §4 rule"),
]


@pytest.mark.parametrize(("module", "seed_value", "step", "times", "finding"), BROKEN)
def test_broken_targets_fail_with_their_step_sequence(
    open_spec: list[Target], module: str, seed_value: int, step: str, times: int, finding: str
) -> None:
    machine = seed(seed_value)(_machine(f"python:tests.targets.{module}", open_spec))
    with pytest.raises(LoopFailure) as caught:
        run_state_machine_as_test(machine, settings=_settings(300, shrink=False))
    assert finding in str(caught.value)
    printed = "\n".join(getattr(caught.value, "__notes__", []))
    steps = [line.strip() for line in printed.splitlines() if line.strip().startswith("state.")]
    # Hypothesis printed the sequence; the bug needed several steps, including the decisive ones.
    assert len(steps) >= 3, printed
    assert sum(s.startswith(step) for s in steps) >= times, printed
    recorded = machine.failures[-1][1]
    assert recorded[0].startswith("user_starts(")
    assert len(recorded) >= 2


def test_rewind_bug_shrinks_to_a_short_sequence(open_spec: list[Target]) -> None:
    machine = seed(1)(_machine("python:tests.targets.broken_loop_rewind", open_spec))
    with pytest.raises(LoopFailure):
        run_state_machine_as_test(machine, settings=_settings(100, shrink=True))
    failure, steps = machine.failures[-1]
    # The minimal session: a start, something that hides (condense or recover), the rewind.
    assert steps[-1].startswith("rewind(")
    assert any(s.startswith(("condense", "recover")) for s in steps)
    assert len(steps) <= 8, steps
    assert failure.op == "effective"


def test_check_recovery_accepts_the_reference_and_names_a_deleted_message(open_spec: list[Target]) -> None:
    from ctxmodel.properties.probe import TargetProbe

    target = open_target("reference")
    open_spec.append(target)
    probe = TargetProbe(target, resolve(target.description.policies), "zoo")
    text = " ".join(["alpha beta gamma delta"] * 120)
    messages = [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "next"},
    ]
    params = {"messages": messages, "contextWindow": 700, "maxTokens": 200, "systemPrompt": ""}
    result = probe.call("recover", params)
    assert check_recovery(probe, params, result, policies={"recoverSuccess": "fits"}) == []
    if result["error"] is None:
        broken = {**result, "messages": result["messages"][1:]}
        findings = check_recovery(probe, params, broken, policies={"recoverSuccess": "fits"})
        assert findings and "contract §4 rule 3" in findings[0]
