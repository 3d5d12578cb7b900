"""Reasoning travels with its item (contract §10.8): the legitimate reasoning trimmers (keep it all,
strip old turns' under ``trimReasoning=strip``, strip only before the last user message under
``reasoningRequired=current-turn``) pass every ``trim`` property in both dialects, and the clause is
judged by a property of its own. (The broken ones are each caught with their code by
``tests/quality/test_witnesses.py``, which runs every declared witness.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxmodel import engine
from ctxmodel.engine import RunConfig
from ctxmodel.policies import resolve
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import all_properties, get
from ctxmodel.targets import open_target
from tests.targets.reasoning_trimmers import LEGITIMATE

#: Every property of the op: a trimmer that strips reasoning must still keep order, fit and pair.
TRIM_OP_PROPERTIES = [p for p in all_properties() if p.op == "trim"]


def test_section_10_8_has_its_property_with_a_witness_per_code() -> None:
    prop = get("trim.reasoning-travels")
    assert prop.clause == "contract §10.8" and prop in TRIM_OP_PROPERTIES
    assert {w.code for w in prop.witnesses} == {"reasoning-edited", "reasoning-stripped",
                                                "current-reasoning-stripped"}
    assert set(prop.policies) == {"dialect", "trimReasoning", "reasoningRequired", "trimPartial", "trimToolCalls"}


#: One per dialect in the default tier (a worker process judged on every trim property, 10-20 s on
#: a busy machine), the rest in the slow tier.
_DEFAULT_TIER = ("StripsBeforeTheLastUser", "StripsOldReasoningChat")


@pytest.mark.parametrize("name", [n if n in _DEFAULT_TIER else pytest.param(n, marks=pytest.mark.slow)
                                  for n in LEGITIMATE])
def test_a_legitimate_reasoning_trimmer_passes(name: str, tmp_path: Path) -> None:
    spec = f"python:tests.targets.reasoning_trimmers:{name}"
    target = open_target(spec)
    try:
        config = RunConfig(profile=get_profile("ci"), policies=resolve(target.description.policies),
                           fixtures_dir=tmp_path, seed=0, database=None, target_spec=spec, max_examples=30)
        report = engine.run(TRIM_OP_PROPERTIES, config, target=target)
    finally:
        target.close()
    statuses = {o.prop.id: o.status + "".join(f" {k.key}" for k in o.kinds) for o in report.outcomes}
    assert statuses == {p.id: "passed" for p in TRIM_OP_PROPERTIES}
