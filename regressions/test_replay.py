"""Every promoted fixture in this directory passes against the reference (contract §8).

Each ``*.json`` here is a failure someone once found (in the reference or in another target), kept
by value: replaying it against the reference must pass, now and after every change, or the reference
has regressed into a bug the gate already knows. The directory holds data and this test only; it is
not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxmodel.fixtures import load_fixture
from ctxmodel.gate import replay
from ctxmodel.properties.registry import get
from ctxmodel.targets import open_target

PATHS = sorted(p for p in Path(__file__).parent.glob("*.json") if not p.name.startswith("."))


def test_the_corpus_is_not_empty_and_named_readably() -> None:
    assert PATHS, "regressions/ holds no fixture"
    for path in PATHS:
        prop_id, sep, slug = path.stem.partition("--")
        assert sep and re.fullmatch(r"[a-z0-9-]+", slug), path.name
        assert get(prop_id).id == prop_id


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_regression_passes_against_the_reference(path: Path) -> None:
    fixture = load_fixture(path)
    verdict = replay(fixture, open_target("reference"), source=str(path))
    assert fixture.property == path.stem.partition("--")[0]
    assert verdict.calls, "the replay never reached the target"
    assert not verdict.failed, "; ".join(f.message for f in verdict.failures)
