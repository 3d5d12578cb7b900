"""Campaigns: 2 workers find the broken Node example's bug and write one
fixture, the reference gives nothing, Ctrl-C leaves fixtures and a valid report, and the database
survives Hypothesis's own ``ci`` profile.

Budgets are examples, not time, with fixed seeds, so each run is repeatable: the Node run covers the
property that catches its bug fastest (``normalize.synthetic-only-where-missing``, about 150
examples at ~20 examples/s against a JS process) plus ``request.oracle``; the full 2-minute,
all-properties campaign of the issue is the same code with ``--duration 2m``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.cli.fuzz import parse_duration
from ctxmodel.errors import UsageError
from ctxmodel.fixtures import load_fixture
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign
from ctxmodel.fuzz.results import CampaignResult
from ctxmodel.gate import replay
from ctxmodel.targets.spec import open_target

#: Campaigns are the slow tier (python -m pytest -m slow).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NODE_BUGGY = "exec:node examples/targets/node/target-buggy.js"
FAST_BROKEN = "python:tests.targets.broken_normalize:UnmarkedSynthetic"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _config(tmp: Path, **changes: object) -> CampaignConfig:
    base: dict[str, object] = {
        "database": str(tmp / "db"),
        "fixtures_dir": str(tmp / "fixtures"),
        "report_dir": str(tmp / "report"),
        "workers": 2,
    }
    base.update(changes)
    return CampaignConfig(**base)  # type: ignore[arg-type]


def _fixtures(tmp: Path) -> list[Path]:
    return sorted((tmp / "fixtures").glob("*.json"))


def _report(tmp: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp / "report" / "report.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def node_campaign(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CampaignResult]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    tmp = tmp_path_factory.mktemp("node-campaign")
    os.chdir(ROOT)
    config = _config(
        tmp,
        target_spec=NODE_BUGGY,
        max_examples=300,
        property_ids=("normalize.synthetic-only-where-missing", "request.oracle"),
        agent_loop=False,
        seed=1,
    )
    return tmp, run_campaign(config, out=open(os.devnull, "w"), tty=False)


@needs_node
def test_node_campaign_finds_the_bug_once(node_campaign: tuple[Path, CampaignResult]) -> None:
    tmp, result = node_campaign
    assert result.exit_code == 1
    assert [f.property for f in result.failures] == ["normalize.synthetic-only-where-missing"]
    fixtures = _fixtures(tmp)
    # One fixture, not one per worker, and it is the one the result names.
    assert len(fixtures) == 1
    assert result.failures[0].fixture == str(fixtures[0])
    fixture = load_fixture(fixtures[0])
    assert fixture.property == "normalize.synthetic-only-where-missing"
    assert fixture.target["name"] == "node-example-buggy"
    # Both workers ran; the failing property was retired, the other one ran to its budget.
    by_id = {p.id: p for p in result.properties}
    assert by_id["request.oracle"].examples >= 300
    assert by_id["request.oracle"].failures == 0


@needs_node
def test_node_campaign_report_shows_the_failure(node_campaign: tuple[Path, CampaignResult]) -> None:
    tmp, result = node_campaign
    data = _report(tmp)
    assert data["exitCode"] == 1
    failures = data["failures"]
    assert isinstance(failures, list) and len(failures) == 1
    assert failures[0]["property"] == "normalize.synthetic-only-where-missing"
    assert failures[0]["fixture"] == result.failures[0].fixture
    assert data["totals"] == result.to_json()["totals"]
    html = (tmp / "report" / "report.html").read_text(encoding="utf-8")
    assert 'data-property="normalize.synthetic-only-where-missing"' in html
    assert 'class="failure"' in html and "what the target returned" in html
    assert "<script src" not in html and "http://" not in html and "https://" not in html


def test_reference_campaign_finds_nothing(tmp_path: Path) -> None:
    os.chdir(ROOT)
    config = _config(tmp_path, target_spec="reference", max_examples=12, seed=3)
    result = run_campaign(config, out=open(os.devnull, "w"), tty=False)
    assert result.exit_code == 0
    assert result.failures == ()
    assert _fixtures(tmp_path) == []
    ran = [p for p in result.properties if p.skipped is None]
    assert ran and all(p.examples >= 12 for p in ran)
    assert any(p.id == "agent-loop" for p in ran)
    assert result.stopped == "max-examples"
    assert _report(tmp_path)["totals"]["failures"] == 0


def test_database_is_kept_under_hypothesis_ci_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis's own ``ci`` profile (auto-loaded when CI is set) has no database; ours must."""
    monkeypatch.setenv("CI", "true")
    os.chdir(ROOT)
    config = _config(
        tmp_path,
        target_spec=FAST_BROKEN,
        max_examples=200,
        property_ids=("normalize.synthetic-marked",),
        agent_loop=False,
        workers=1,
        seed=5,
    )
    result = run_campaign(config, out=open(os.devnull, "w"), tty=False)
    assert result.exit_code == 1
    stored = [p for p in (tmp_path / "db").rglob("*") if p.is_file()]
    assert stored, "the failing example was not saved to the campaign's database"


def test_sigint_leaves_fixtures_and_a_valid_report(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable, "-m", "ctxmodel", "fuzz", "--target", FAST_BROKEN,
        "--property", "normalize.synthetic-marked", "--property", "request.oracle", "--no-agent-loop",
        "--workers", "2", "--duration", "5m", "--seed", "5",
        "--db", str(tmp_path / "db"), "--fixtures", str(tmp_path / "fixtures"), "--report", str(tmp_path / "report"),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        waited = 0.0
        while not _fixtures(tmp_path) and proc.poll() is None and waited < 180:
            time.sleep(0.5)
            waited += 0.5
        assert _fixtures(tmp_path), "no fixture appeared before the interrupt"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, out
    assert "Traceback" not in out
    fixtures = _fixtures(tmp_path)
    assert len(fixtures) == 1
    assert load_fixture(fixtures[0]).property == "normalize.synthetic-marked"
    data = _report(tmp_path)
    assert data["stopped"] == "interrupted"
    assert [f["fixture"] for f in data["failures"]] == [str(fixtures[0])]
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert html.rstrip().endswith("</html>")
    # No torn temporary files left by the atomic writes.
    assert not [p for p in (tmp_path / "fixtures").iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--target", "reference"], 2, "--duration or --max-examples"),
        (["--target", "reference", "--duration", "soon"], 2, "--duration 'soon'"),
        (["--target", "nowhere", "--max-examples", "1"], 2, "--target 'nowhere'"),
        (["--target", "exec:/nonexistent/target", "--max-examples", "1"], 3, "ctxmodel:"),
        (["--target", "reference", "--max-examples", "1", "--property", "no.such"], 2, "no property matches"),
    ],
)
def test_cli_errors_are_one_line_with_contract_exit_codes(
    tmp_path: Path, args: list[str], code: int, text: str
) -> None:
    cmd = [sys.executable, "-m", "ctxmodel", "fuzz", *args, "--db", str(tmp_path / "db"), "--report", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    assert text in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_parse_duration() -> None:
    assert parse_duration("90") == 90
    assert parse_duration("90s") == 90
    assert parse_duration("30m") == 1800
    assert parse_duration("1h30m") == 5400
    with pytest.raises(UsageError):
        parse_duration("30 minutes")


def test_agent_loop_unit_writes_a_replayable_fixture_with_its_steps(tmp_path: Path) -> None:
    """One slice of the loop (5 runs) against a target that forgets a summary's rewind: every kind it
    meets is that bug seen from one property, each fixture replays as its single-call property."""
    os.chdir(ROOT)
    config = _config(
        tmp_path, target_spec="python:tests.targets.broken_loop_rewind", max_examples=5,
        property_ids=("agent-loop",), workers=1, seed=2,
    )  # fmt: skip
    result = run_campaign(config, out=open(os.devnull, "w"), tty=False)
    assert result.exit_code == 1
    assert result.failures and all(f.property == "agent-loop" for f in result.failures)
    target = open_target("python:tests.targets.broken_loop_rewind")
    try:
        for failure in result.failures:
            assert failure.steps[0].startswith("user_starts(") and any(s.startswith("rewind(") for s in failure.steps)
            fixture = load_fixture(failure.fixture or "")
            # Named after the single-call suite property that sees the same call, so `ctxmodel replay` runs it.
            assert fixture.kind == failure.key and "rewind(" in fixture.note
            assert replay(fixture, target).failed
    finally:
        target.close()
    assert "effective.visibility/visible-missing" in {f.key for f in result.failures}
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "step sequence" in html
