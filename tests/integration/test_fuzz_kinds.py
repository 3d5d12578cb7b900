"""A campaign keeps every kind, as ``ctxmodel check`` does: a target with three independent bugs in
one property gives three kinds, each with its own shrunk fixture that replays as that kind, once
however many workers met it; the report and the summary list the kinds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxmodel.fixtures import load_fixture
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign
from ctxmodel.fuzz.progress import summary
from ctxmodel.gate import replay
from ctxmodel.targets.spec import open_target

#: Shrinking three kinds on two shared cores takes about half a minute.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
THREE = "python:tests.targets.three_bugs:ThreeWays"
PROPERTY = "normalize.results-lead"
KINDS = {f"{PROPERTY}/{code}" for code in ("result-after-image", "duplicate-result", "result-missing")}


def test_two_workers_keep_three_kinds_of_one_property(tmp_path: Path) -> None:
    os.chdir(ROOT)
    config = CampaignConfig(
        target_spec=THREE,
        max_examples=40,
        workers=2,
        database=str(tmp_path / "db"),
        fixtures_dir=str(tmp_path / "fixtures"),
        report_dir=str(tmp_path / "report"),
        property_ids=(PROPERTY,),
        agent_loop=False,
        seed=1,
    )
    result = run_campaign(config, out=open(os.devnull, "w"), tty=False)
    assert result.exit_code == 1
    keys = [f.key for f in result.failures]
    assert set(keys) == KINDS and len(keys) == 3, keys  # each kind once, whichever worker met it
    fixtures = sorted((tmp_path / "fixtures").glob("*.json"))
    assert sorted(f.fixture or "" for f in result.failures) == [str(p) for p in fixtures]
    target = open_target(THREE)
    try:
        for record in result.failures:
            fixture = load_fixture(record.fixture or "")
            assert fixture.kind == record.key
            verdict = replay(fixture, target)
            assert {f.code for f in verdict.failures} == {record.key.split("/")[1]}, (record.key, verdict)
    finally:
        target.close()
    (prop,) = result.properties
    assert prop.failures == 3 and prop.status == "failed"
    data = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert {f["kind"] for f in data["failures"]} == KINDS
    assert data["totals"]["failures"] == 3
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    for key in KINDS:
        assert f'data-kind="{key}"' in html
    assert '<span data-figure="kinds">3</span>' in html
    text = summary(result, None)
    assert f"{PROPERTY}: FAILED (3 kinds)" in text
    assert all(f"FAILED {key} " in text for key in KINDS)
