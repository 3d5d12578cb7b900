"""Shrinking ends somewhere readable: broken normalizers, each caught by the real property against a
witness target, shrink to a history of at most 3 messages (a first user message, the assistant turn,
the user turn) with short ids. The gate's own engine shrinks; what is judged is its fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxmodel.fixtures import load_fixture
from ctxmodel.gate import run_property
from ctxmodel.policies import resolve
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import get
from ctxmodel.runs import RunConfig
from ctxmodel.targets import open_target

pytestmark = pytest.mark.slow

N = "python:tests.targets.broken_normalize"
#: (witness, the property that catches it): the bugs field code has shipped (domain §4).
CASES = [
    (f"{N}:KeepsDuplicateToolUses", "normalize.duplicate-ids"),
    (f"{N}:ResultsSplit", "normalize.results-lead"),
    (f"{N}:PositionalRemap", "normalize.no-relabel"),
    (f"{N}:UnmarkedSynthetic", "normalize.synthetic-marked"),
    (f"{N}:StripsMetadata", "normalize.keeps-other-content"),
]


def _tool_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["id"] for m in messages if isinstance(m.get("content"), list)
        for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


@pytest.mark.parametrize(("spec", "prop_id"), CASES, ids=[c[1] for c in CASES])
def test_a_broken_normalizer_shrinks_to_at_most_three_messages(spec: str, prop_id: str, tmp_path: Path) -> None:
    target = open_target(spec)
    try:
        outcome = run_property(
            get(prop_id), target,
            RunConfig(profile=get_profile("ci"), policies=resolve(target.description.policies), fixtures_dir=tmp_path,
                      max_examples=300, database=None),
        )
    finally:
        target.close()
    assert outcome.status == "failed", f"{prop_id} did not catch {spec}"
    for kind in outcome.kinds:
        fixture = load_fixture(kind.fixture)  # type: ignore[arg-type]
        messages = fixture.params["messages"]
        assert len(messages) <= 3, (kind.key, messages)
        assert all(len(t) <= len("toolu_a2") for t in _tool_ids(messages)), _tool_ids(messages)
