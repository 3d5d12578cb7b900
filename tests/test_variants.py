"""No false alarms: legitimate alternative implementations, each with its declared policies, pass
the whole suite (warnings allowed). Each variant makes one choice the reference does not (contract
§2–§4 "Required of every target" versus "Reference")."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from ctxmodel.gate import judge
from ctxmodel.policies import resolve
from ctxmodel.targets import open_target
from properties.catalogue import Property, all_properties

VARIANTS = [
    "python:tests.targets.variant_reference:Reference",
    "python:tests.targets.variant_arrival_order:Variant",
    "python:tests.targets.variant_text_marked:Variant",
    "python:tests.targets.variant_orphans_text:Variant",
    "python:tests.targets.variant_effective_filter:Variant",
    "python:tests.targets.variant_zoo_halves:Variant",
    "python:tests.targets.variant_keeps_emptied:Variant",
    "python:tests.targets.variant_relabel:Variant",
]
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
    for params_fn, props in groups.items():
        run_group(params_fn(policies), props, target, policies, failures, max_examples)
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


@pytest.mark.parametrize("spec", VARIANTS, ids=[v.split(".")[-1] for v in VARIANTS])
def test_legitimate_variant_passes_every_property(spec: str) -> None:
    failures = run_suite(spec, EXAMPLES)
    assert not failures, "\n".join(f"{pid}: {msg}\n    input: {params}" for pid, (msg, params) in failures.items())
