"""A check and a fuzz campaign end by the same rules (contract §9, ``ctxmodel.results.verdict_code``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodel import exitcodes
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign
from ctxmodel.results import verdict_code

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("failed", "unrunnable", "nothing", "code"),
    [
        (True, True, True, exitcodes.FAILED),
        (False, True, False, exitcodes.USAGE),
        (False, False, True, exitcodes.USAGE),
        (False, False, False, exitcodes.OK),
    ],
)
def test_the_verdict_rules(failed: bool, unrunnable: bool, nothing: bool, code: int) -> None:
    assert verdict_code(failed=failed, unrunnable=unrunnable, judged_nothing=nothing) == code


def test_a_campaign_that_judged_nothing_exits_2_as_check_does(tmp_path: Path) -> None:
    """Stopped before any example was judged, a campaign says nothing of the target: not a pass."""
    os.chdir(ROOT)
    config = CampaignConfig(
        target_spec="reference", duration=0.01, workers=1, database=str(tmp_path / "db"),
        fixtures_dir=str(tmp_path / "fixtures"), report_dir=str(tmp_path / "report"),
    )
    with open(os.devnull, "w") as out:
        result = run_campaign(config, out=out, tty=False)
    assert sum(p.examples for p in result.properties) == 0
    assert result.exit_code == exitcodes.USAGE
