"""The minimizer: a failing request's messages dropped after the shrink while the same kind fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ctxmodel.fixtures import load_fixture
from ctxmodel.gate import replay, run_property
from ctxmodel.minimize import StopMinimizing, minimize_request
from ctxmodel.policies import resolve
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import get
from ctxmodel.runs import RunConfig, RunOptions
from ctxmodel.targets import open_target
from tests.targets.broken_trim import _Broken


def _history(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def test_only_the_messages_the_failure_needs_stay() -> None:
    asked: list[dict[str, Any]] = []

    def fails(params: dict[str, Any]) -> bool:
        asked.append(params)
        texts = [m["content"] for m in params["messages"]]
        return "m2" in texts and "m5" in texts and texts.index("m2") < texts.index("m5")

    params: dict[str, Any] = {"messages": _history(9), "systemPrompt": "be brief", "contextWindow": 100, "maxTokens": 1}
    trimmed = minimize_request(params, fails)
    assert [m["content"] for m in trimmed["messages"]] == ["m2", "m5"]
    assert trimmed["systemPrompt"] == "" and trimmed["contextWindow"] == 100 and trimmed["maxTokens"] == 1
    assert len(params["messages"]) == 9 and params["systemPrompt"] == "be brief"  # the caller's input untouched
    assert all(p is not params for p in asked)


def test_a_needed_system_prompt_and_tool_turn_stay() -> None:
    def fails(params: dict[str, Any]) -> bool:
        return params["systemPrompt"] == "S" and len(params["messages"]) >= 3

    trimmed = minimize_request({"messages": _history(8), "systemPrompt": "S"}, fails)
    assert trimmed["systemPrompt"] == "S" and len(trimmed["messages"]) == 3


def test_trials_are_bounded_and_inputs_without_messages_are_left_alone() -> None:
    calls = [0]

    def never(_: dict[str, Any]) -> bool:
        calls[0] += 1
        return False

    assert minimize_request({"messages": _history(60)}, never, max_trials=25) == {"messages": _history(60)}
    assert calls[0] == 25
    assert minimize_request({"text": "abc"}, never) == {"text": "abc"}


def test_a_drop_that_fits_the_old_budget_is_tried_again_with_the_budget_lowered_by_it() -> None:
    # A failure that needs the history over its budget: the plain drop of m0 fits and passes, the drop
    # with the window lowered by m0's share fails as before and is kept.
    def over(params: dict[str, Any]) -> bool:
        return bool(len(params["messages"]) * 10 > params["contextWindow"])

    def lowered(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
        dropped = len(before["messages"]) - len(after["messages"])
        return {**after, "contextWindow": before["contextWindow"] - 10 * dropped}

    params: dict[str, Any] = {"messages": _history(3), "contextWindow": 25, "maxTokens": 1}
    assert minimize_request(params, over) == params
    trimmed = minimize_request(params, over, rebudget=lowered)
    assert len(trimmed["messages"]) == 1 and trimmed["contextWindow"] == 5


def _run(tmp_path: Path, params: dict[str, Any], trim: bool) -> Any:
    target = open_target("python:tests.targets.broken_normalize:StripsMetadata")
    try:
        return run_property(
            get("normalize.keeps-other-content"), target,
            RunConfig(profile=get_profile("replay"), policies=resolve(target.description.policies),
                      fixtures_dir=tmp_path, database=None, regressions={"normalize.keeps-other-content": [params]}),
            RunOptions(minimize=trim),
        )
    finally:
        target.close()


def test_the_gate_writes_the_trimmed_fixture_only_and_it_replays(tmp_path: Path) -> None:
    # An explicit example is not shrunk by Hypothesis: what the gate writes is what trimming left.
    history = _history(9)
    history[4] = {**history[4], "ts": 1767225600000}  # the one message whose metadata the target strips
    untrimmed = _run(tmp_path / "untrimmed", {"messages": history}, trim=False)
    trimmed = _run(tmp_path / "trimmed", {"messages": history}, trim=True)
    assert untrimmed.status == trimmed.status == "failed"
    assert len(untrimmed.kinds[0].params["messages"]) == 9
    [kind] = trimmed.kinds
    assert list((tmp_path / "trimmed").iterdir()) == [kind.fixture]  # the untrimmed fixture is gone
    fixture = load_fixture(kind.fixture)
    assert fixture.params["messages"] == [history[4]]
    target = open_target("python:tests.targets.broken_normalize:StripsMetadata")
    try:
        assert replay(fixture, target).failed
    finally:
        target.close()


def test_a_trial_that_stops_the_trim_keeps_what_was_dropped_before() -> None:
    seen = [0]

    def fails(params: dict[str, Any]) -> bool:
        seen[0] += 1
        if seen[0] == 3:
            raise StopMinimizing
        return True

    trimmed = minimize_request({"messages": _history(9)}, fails)
    assert [m["content"] for m in trimmed["messages"]] == [f"m{i}" for i in range(5)]


def _two_assistants(probe: Any, ex: Any) -> Any:
    """A toy property that fails on any input holding two assistant messages."""
    from ctxmodel.properties.catalogue import Finding

    if sum(m.get("role") == "assistant" for m in ex.params["messages"]) >= 2:
        yield Finding.fail("two assistant messages", "at most one", code="two")


def test_the_trim_keeps_a_request_inside_the_declared_input_space(tmp_path: Path) -> None:
    """Under ``inputs=agent-stored`` a call is never stored without its results before the next
    assistant message: the trim may not drop the results and keep the call and what follows."""
    from hypothesis import strategies as st

    from ctxmodel.properties.catalogue import Property
    from ctxmodel.strategies.stored import within

    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "r", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"}]}
    history = [{"role": "user", "content": "hi"}, use, result, {"role": "assistant", "content": "done"}]
    assert within({"messages": history}, "agent-stored")
    toy = Property("toy.two-assistants", "normalize", "contract §7", "toy", lambda _: st.just({"messages": []}),
                   _two_assistants, requires=frozenset({"normalize"}))
    outcomes = {}
    for inputs in ("any", "agent-stored"):
        outcomes[inputs] = run_property(
            toy, open_target("reference"),
            RunConfig(profile=get_profile("replay"), policies=resolve({}, {"inputs": inputs}), tokenizer="zoo",
                      fixtures_dir=tmp_path / inputs, database=None, regressions={toy.id: [{"messages": history}]}),
        )
    assert outcomes["any"].kinds, outcomes["any"]
    assert outcomes["any"].kinds[0].params["messages"] == [use, history[3]]  # the smallest, outside the space
    kept = outcomes["agent-stored"].kinds[0].params
    assert within(kept, "agent-stored") and kept["messages"] == [use, result, history[3]], kept


def test_a_property_of_another_dialect_is_skipped_before_anything_is_drawn(tmp_path: Path) -> None:
    """count.agrees judges Anthropic counts: a Chat Completions target is never sent its inputs."""
    target = open_target("reference:openai-chat")
    policies = resolve(target.description.policies)
    outcome = run_property(get("count.agrees"), target,
                           RunConfig(profile=get_profile("ci"), policies=policies, fixtures_dir=tmp_path,
                                     max_examples=5, database=None))
    assert outcome.status == "skipped" and outcome.examples == 0
    assert outcome.reason == "judges anthropic targets, not openai-chat"


class KeepsFirstEndingOnATool(_Broken):
    """``strategy="first"`` with ``end_on=("human", "tool")``, as LangChain trims: the longest prefix
    that fits, cut back to its last user or tool message, so a call may keep only some of its results."""

    name = "keeps-first-ending-on-a-tool"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any"}

    def trim(self, params: dict[str, Any]) -> dict[str, Any]:
        messages: list[dict[str, Any]] = params["messages"]
        count = self.measure(params)
        n = max((k for k in range(len(messages) + 1) if count(messages[:k]) <= params["maxTokens"]), default=0)
        while n and messages[n - 1]["role"] not in ("user", "tool"):
            n -= 1
        return {"messages": messages[:n]} if n else {"error": "nothing fits"}


def _call(ids: list[str]) -> dict[str, Any]:
    calls = [{"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_a_trim_budget_placed_by_turns_is_made_tokens_so_the_turns_around_the_bug_can_go(tmp_path: Path) -> None:
    # "All but the first turn" moves with every message dropped: without the budget made a number of
    # tokens, the first turn and the calls after the broken pair could not be dropped (9 messages).
    history = [
        {"role": "user", "content": "h"}, _call(["c0"]), {"role": "tool", "tool_call_id": "c0", "content": "ok"},
        {"role": "user", "content": "h"}, _call(["c2", "c3", "c4", "c5"]),
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "tool", "tool_call_id": "c3", "content": "ok " * 30},
        _call(["c6"]), {"role": "tool", "tool_call_id": "c6", "content": "ok"},
    ]  # fmt: skip
    target = open_target("python:tests.integration.test_minimize:KeepsFirstEndingOnATool")
    try:
        outcome = run_property(
            get("trim.accepted"), target,
            RunConfig(profile=get_profile("replay"), policies=resolve(target.description.policies),
                      fixtures_dir=tmp_path, database=None,
                      regressions={"trim.accepted": [
                          {"messages": history, "_budget": {"at": "drop-first-turn", "delta": 0}}]}),
            RunOptions(minimize=True),
        )  # fmt: skip
    finally:
        target.close()
    assert outcome.status == "failed", outcome
    [kind] = outcome.kinds
    assert kind.key == "trim.accepted/pairing-broken"
    assert len(kind.params["messages"]) <= 3 and kind.params["_budget"]["at"] == "tokens"
    assert [m["role"] for m in kind.params["messages"]][-2:] == ["tool", "tool"]
