"""A fuzz campaign and ``ctxmodel check`` are two schedulers of one engine: at the same seed and
example budget, against a target whose bugs any search of that size meets, they report the same
kinds. A campaign that judged differently (its own runner, its own kind rules) would show here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodel import engine
from ctxmodel.engine import RunConfig
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import get
from ctxmodel.targets.spec import open_target

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("spec", "properties"),
    [
        # Three kinds of one property, each shrunk: about 50 s on two shared cores.
        pytest.param("python:tests.targets.three_bugs:ThreeWays", ("normalize.results-lead",), marks=pytest.mark.slow),
        ("python:tests.targets.two_places:TwoPlaces", ("count.agrees", "effective.visibility", "request.oracle")),
    ],
)
def test_a_campaign_and_a_check_report_the_same_kinds(tmp_path: Path, spec: str, properties: tuple[str, ...]) -> None:
    os.chdir(ROOT)
    seed, budget = 1, 40
    target = open_target(spec)
    try:
        report = engine.run(
            [get(p) for p in properties],
            RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "check", seed=seed, max_examples=budget,
                      database=None),
            target=target,
        )  # fmt: skip
    finally:
        target.close()
    checked = {kind.key for outcome in report.outcomes for kind in outcome.kinds}
    with open(os.devnull, "w") as out:
        result = run_campaign(
            CampaignConfig(target_spec=spec, max_examples=budget, workers=2, seed=seed, agent_loop=False,
                           property_ids=properties, database=str(tmp_path / "db"),
                           fixtures_dir=str(tmp_path / "fuzz"), report_dir=None),
            out=out, tty=False,
        )  # fmt: skip
    fuzzed = {record.key for record in result.failures}
    assert checked, "the check found nothing: the target is not the one this test is about"
    assert fuzzed == checked
    assert result.exit_code == engine.exit_code(report.outcomes) == 1
