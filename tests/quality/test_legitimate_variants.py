"""No false alarms: legitimate alternative implementations, each with its declared policies, pass
the whole suite (warnings allowed). Each variant makes one choice the reference does not (contract
§2-§4 "Required of every target" versus "Reference")."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from ctxmodel.gate import judge
from ctxmodel.policies import resolve
from ctxmodel.properties.catalogue import Property
from ctxmodel.properties.registry import all_properties
from ctxmodel.targets import open_target
from tests.targets.variant_reference import allowed, recount

VARIANTS = [
    "python:tests.targets.variant_reference:Reference",
    "python:tests.targets.variant_arrival_order:Variant",
    "python:tests.targets.variant_text_marked:Variant",
    "python:tests.targets.variant_orphans_text:Variant",
    "python:tests.targets.variant_effective_filter:Variant",
    "python:tests.targets.variant_zoo_halves:Variant",
    "python:tests.targets.variant_keeps_emptied:Variant",
    "python:tests.targets.variant_relabel:Variant",
    "python:tests.targets.variant_merges_users:Variant",
]
#: The two that run in every CI run (20 s each on a busy 2-core machine); the others, 25-40 s each,
#: are in the slow tier.
FAST = ("variant_effective_filter", "variant_relabel")
EXAMPLES = 25


def run_suite(spec: str, max_examples: int) -> dict[str, tuple[str, Any]]:
    """Every property on one target, drawing each params strategy once for all the properties that
    share it (the suite's cost is mostly drawing histories). Returns the first failure per property."""
    target = open_target(spec)
    policies = resolve(target.description.policies)
    groups: dict[Any, list[Property]] = defaultdict(list)
    for prop in all_properties():
        if prop.requires <= target.description.ops:
            groups[prop.params].append(prop)
    failures: dict[str, tuple[str, Any]] = {}
    for props in groups.values():  # in the input space the variant declared
        run_group(props[0].inputs(policies), props, target, policies, failures, max_examples)
    return failures


def run_group(strategy: Any, props: list[Property], target: Any, policies: dict[str, str],
              failures: dict[str, tuple[str, Any]], max_examples: int) -> None:
    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(params: dict[str, Any]) -> None:
        for prop in props:
            verdict = judge(prop, target, params, policies=policies, tokenizer=target.description.tokenizer)
            for finding in verdict.failures:
                failures.setdefault(prop.id, (finding.message, params))

    run()


@pytest.mark.parametrize("spec", [
    pytest.param(v, id=v.split(".")[-1], marks=() if v.split(".")[-1].split(":")[0] in FAST else pytest.mark.slow)
    for v in VARIANTS
])
def test_legitimate_variant_passes_every_property(spec: str) -> None:
    failures = run_suite(spec, EXAMPLES)
    assert not failures, "\n".join(f"{pid}: {msg}\n    input: {params}" for pid, (msg, params) in failures.items())


def _u(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "ls", "input": {}}


def _r(i: str, content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": content}


PAIR = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [_u("a"), _u("b")]}]
#: For each variant, an input on which it answers differently from the reference (so that passing
#: the suite is not vacuous): the op, the params, and what only the variant does.
DIFFERS = {
    "variant_arrival_order": ("normalize", [*PAIR, {"role": "user", "content": [_r("b"), _r("a")]}]),
    "variant_text_marked": ("normalize", [*PAIR, {"role": "user", "content": [_r("a")]}]),
    "variant_orphans_text": ("normalize", [*PAIR, {"role": "user", "content": [_r("a"), _r("b"), _r("z", [
        {"type": "text", "text": "kept"}])]}]),
    "variant_effective_filter": ("effective", [*PAIR, {"role": "user", "content": [_r("a"), _r("b"), _r("z")]}]),
    "variant_keeps_emptied": ("normalize", [*PAIR, {"role": "user", "content": [_r("a"), _r("b")]},
                                            {"role": "assistant", "content": [_u("a"), _u("c")]},
                                            {"role": "user", "content": [_r("a")], "ts": 7}]),
    "variant_relabel": ("normalize", [*PAIR, {"role": "user", "content": [_r("a"), _r("z")]}]),
    "variant_merges_users": ("normalize", [*PAIR, {"role": "user", "content": [_r("a"), _r("b")]},
                                           {"role": "user", "content": "and then", "ts": 7}]),
}


@pytest.mark.parametrize("name", sorted(DIFFERS))
def test_variant_really_differs_from_the_reference(name: str) -> None:
    op, messages = DIFFERS[name]
    variant = open_target(f"python:tests.targets.{name}:Variant")
    reference = open_target("reference")
    params = {"messages": messages, "policies": resolve(variant.description.policies)}
    assert variant.call(op, params) != reference.call(op, params)


def test_zoo_halves_hides_half_and_converges() -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 300}
             for i in range(10)]
    variant = open_target("python:tests.targets.variant_zoo_halves:Variant")
    window = (recount(turns) * 45 // 100 + 1000) * 10 // 9  # allowed: 45% of the history
    first = variant.call("recover", {"messages": turns, "contextWindow": window, "maxTokens": 1000})
    assert first["error"] is None and first["messagesRemoved"] == 4  # 9 after the first, halved, even
    assert first["newContextTokens"] > allowed({"contextWindow": window, "maxTokens": 1000})
    second = variant.call("recover", {"messages": first["messages"], "contextWindow": window, "maxTokens": 1000})
    assert second["error"] is None and second["messagesRemoved"] == 2
    assert second["newContextTokens"] <= allowed({"contextWindow": window, "maxTokens": 1000})
