"""The probe and the judging helpers on hand-made inputs, and the catalogue's own shape."""

from __future__ import annotations

import re
from typing import Any

from ctxmodel.properties.json_reading import pairing_violations, plan_normalize, result_payload, synthetic_marked
from ctxmodel.properties.probe import TargetProbe
from ctxmodel.properties.registry import all_properties
from ctxmodel.properties.suite_purity import without_fresh_values
from ctxmodel.targets import Description, TargetFailure, open_target
from ctxmodel.targets.base import OPS


def use(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "ls", "input": {}}


def res(i: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": content, **extra}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "go", "ts": 1},
    {"role": "assistant", "content": [use("a"), use("b")]},
    {"role": "user", "content": [res("b"), text("note"), res("a", "A"), res("zz", "lost")]},
    {"role": "assistant", "content": [use("a")]},
    {"role": "user", "content": [res("a", "again")]},
]


class Recorder:
    """A target that offers only the ops it is given, recording what it was called with."""

    def __init__(self, ops: dict[str, Any]) -> None:
        self.ops = ops
        self.description = Description("rec", "1", frozenset(ops), "zoo", {})
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        self.seen.append((op, params))
        if op not in self.ops:
            raise TargetFailure("error-reply", f"no {op}")
        result: dict[str, Any] = self.ops[op](params)
        return result

    def close(self) -> None:
        pass


def test_pairing_violations_by_rule_and_id() -> None:
    found = pairing_violations(HISTORY)
    # "a" is not in the leading run of messages.2 (text comes first), "zz" is nobody's, and the
    # repeated "a" of messages.3 makes messages.4's result valid there.
    assert found == {("missing-result", "a"): 1, ("unexpected-result", "zz"): 1}


def test_plan_follows_rule_five_then_input_adjacency() -> None:
    plan = plan_normalize(HISTORY)
    assert [i for i, _ in plan.messages] == [0, 1, 2]  # messages.3 emptied by rule 5, messages.4 too
    assert set(plan.valid) == {"a", "b"}
    assert [o.id for o in plan.orphans] == ["zz"] and plan.orphans[0].before == 1
    assert plan.duplicated == {"a": use("a")}
    assert plan.removed_results == [res("a", "again")]


def test_payload_and_synthetic_marks() -> None:
    assert result_payload(res("x", "")) == result_payload({"type": "tool_result", "tool_use_id": "x"})
    assert result_payload(res("x", "e", is_error=True)) != result_payload(res("x", "e"))
    assert synthetic_marked(res("x", "Tool was Interrupted"))
    assert synthetic_marked(res("x", [text("failed")], is_error=True))
    assert not synthetic_marked(res("x", "", is_error=True))
    assert not synthetic_marked(res("x", "done"))


def test_probe_records_policies_and_never_lets_the_target_touch_the_callers_params() -> None:
    def mutate(params: dict[str, Any]) -> dict[str, Any]:
        params["messages"].append({"role": "user", "content": "x"})
        return {"messages": params["messages"]}

    probe = TargetProbe(Recorder({"normalize": mutate}), {"orphans": "drop"}, "zoo")
    mine = {"messages": [{"role": "user", "content": "hi"}]}
    probe.call("normalize", mine)
    assert mine == {"messages": [{"role": "user", "content": "hi"}]}
    exchange = probe.calls[-1]
    assert exchange.params == {"messages": [{"role": "user", "content": "hi"}], "policies": {"orphans": "drop"}}
    assert len(probe.sent[-1]["messages"]) == 2  # the mutation is visible to purity checks


def test_probe_request_is_the_targets_own() -> None:
    seen: list[str] = []

    def op(name: str) -> Any:
        def run(params: dict[str, Any]) -> dict[str, Any]:
            seen.append(name)
            return {"messages": params["messages"]}

        return run

    msgs = [{"role": "user", "content": "hi"}]
    TargetProbe(Recorder({"request": op("request"), "normalize": op("normalize")}), {}, "zoo").request(msgs)
    TargetProbe(Recorder({"effective": op("effective"), "normalize": op("normalize")}), {}, "zoo").request(msgs)
    TargetProbe(Recorder({"effective": op("effective")}), {}, "zoo").request(msgs)
    assert seen == ["request", "effective", "normalize", "effective"]


def test_recount_counts_the_system_prompt_by_its_own_call() -> None:
    probe = TargetProbe(open_target("reference"), {}, "zoo")
    msgs = [{"role": "user", "content": "hello there"}]
    assert probe.recount(msgs, "be brief") == probe.count([], "be brief") + probe.count(msgs)
    hidden: list[dict[str, Any]] = [*msgs, {"role": "user", "content": "x" * 50, "truncationParent": "t"},
              {"role": "user", "content": "m", "isTruncationMarker": True, "truncationId": "t"}]
    assert probe.recount(hidden) < probe.count(hidden)


def test_fresh_ids_and_timestamps_are_not_state() -> None:
    params = {"messages": [{"role": "user", "content": "a", "ts": 5}]}
    one = {"truncationId": "u1", "messages": [{"ts": 4, "truncationId": "u1"}, {"ts": 5}]}
    two = {"truncationId": "u2", "messages": [{"ts": 3, "truncationId": "u2"}, {"ts": 5}]}
    assert without_fresh_values(one, params) == without_fresh_values(two, params)
    assert without_fresh_values({"tokens": 1}, params) != without_fresh_values({"tokens": 2}, params)


def test_catalogue_shape() -> None:
    props = all_properties()
    assert len(props) >= 30
    for prop in props:
        assert re.fullmatch(r"[a-z]+\.[a-z0-9-]+", prop.id), prop.id
        assert prop.op in OPS and prop.id.split(".")[0] in {prop.op, "purity"}
        assert prop.clause.startswith("contract §"), prop.id
        assert prop.summary.endswith("."), prop.id


def test_the_visibility_judge_agrees_with_the_reference_but_does_not_call_it() -> None:
    """effective.visibility judges by contract §2 restated, so a bug in the reference shows."""
    from hypothesis import given

    from ctxmodel import codec
    from ctxmodel.properties.yardsticks import visible_mask as contract_visible
    from ctxmodel.strategies import histories
    from ctxmodel.visibility import visible_mask

    @given(histories())
    def agree(history: list[dict]) -> None:  # type: ignore[type-arg]
        assert contract_visible(history) == visible_mask(codec.load(history))

    agree()
