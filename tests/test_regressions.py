"""Every promoted fixture in ``regressions/`` passes against the reference (contract §8)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxmodel.targets import open_target
from properties.catalogue import get
from regressions.replay import fixture_paths, replay_one

PATHS = fixture_paths()


def test_the_corpus_is_not_empty_and_named_readably() -> None:
    assert PATHS, "regressions/ holds no fixture"
    for path in PATHS:
        prop_id, sep, slug = path.stem.partition("--")
        assert sep and re.fullmatch(r"[a-z0-9-]+", slug), path.name
        assert get(prop_id).id == prop_id


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_regression_passes_against_the_reference(path: Path) -> None:
    fixture, verdict = replay_one(path, open_target("reference"))
    assert fixture.property == path.stem.partition("--")[0]
    assert verdict.calls, "the replay never reached the target"
    assert not verdict.failed, "; ".join(f.message for f in verdict.failures)
