"""One campaign across machines: two campaign processes joined through one Redis (``--db redis://…
--campaign NAME``) give one report whose kinds are the union of what each met, each kind once, with
the fixtures themselves kept in Redis (``ctxmodel fuzz report --fixtures DIR`` writes them).

Uses ``CTXMODEL_REDIS_URL`` when set (``.ci/redis.sh`` exports it), else starts a throwaway
``redis-server`` on a free 127.0.0.1 port; skipped, saying why, when neither is available.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ctxmodel.errors import UsageError
from ctxmodel.fixtures import load_fixture
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign
from ctxmodel.fuzz.shared_campaign import SharedCampaign, check_name
from ctxmodel.gate import replay
from ctxmodel.targets.spec import open_target

ROOT = Path(__file__).resolve().parents[2]
TWO = "python:tests.targets.two_places:TwoPlaces"




def _machine(tmp: Path, name: str, url: str, campaign: str, seed: int, *props: str) -> subprocess.Popen[str]:
    """One machine: its own process, fixtures, report and seed, joined to ``campaign``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable, "-m", "ctxmodel", "fuzz", "--target", TWO, "--no-agent-loop", "--workers", "1",
        "--max-examples", "10", "--seed", str(seed), "--db", url, "--campaign", campaign,
        "--fixtures", str(tmp / name / "fixtures"), "--report", str(tmp / name / "report"),
        *(a for p in props for a in ("--property", p)),
    ]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow  # two machines start, fuzz and report: about half a minute on two shared cores
def test_two_machines_give_one_report_of_the_union(redis_url: str, tmp_path: Path) -> None:
    campaign = f"test-{uuid.uuid4().hex[:8]}"
    shared = SharedCampaign(redis_url, campaign)
    try:
        # Both run count.agrees (its kind is kept once, whoever met it first); each runs one more.
        a = _machine(tmp_path, "a", redis_url, campaign, 1, "count.agrees")
        b = _machine(tmp_path, "b", redis_url, campaign, 2, "count.agrees", "effective.visibility")
        outs = [p.communicate(timeout=170)[0] for p in (a, b)]
        assert [a.returncode, b.returncode] == [1, 1], outs
        assert all("Traceback" not in out for out in outs), outs
        report = tmp_path / "report"
        fixtures = tmp_path / "all-fixtures"
        done = subprocess.run(
            [sys.executable, "-m", "ctxmodel", "fuzz", "report", "--db", redis_url, "--campaign", campaign,
             "--report", str(report), "--fixtures", str(fixtures)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        data = json.loads((report / "report.json").read_text(encoding="utf-8"))
        kinds = [f["kind"] for f in data["failures"]]
        assert len(kinds) == len(set(kinds)), kinds  # each kind once
        assert {"count.agrees", "effective.visibility"} <= {k.split("/")[0] for k in kinds}, kinds
        # The union of what each machine claimed, and no machine claimed a kind another one did.
        machines = data["machines"]
        assert len(machines) == 2 and data["workers"] == 2
        claimed = [k for m in machines for k in m["kinds"]]
        assert sorted(claimed) == sorted(kinds)
        assert all(m["stopped"] == "max-examples" for m in machines)
        # Counts and events of both machines are summed: count.agrees ran on both.
        by_id = {p["id"]: p for p in data["properties"]}
        assert by_id["count.agrees"]["examples"] >= 20 and by_id["effective.visibility"]["examples"] >= 10
        assert data["totals"]["failures"] == len(kinds) and data["campaign"] == campaign
        # Every fixture came out of Redis and replays as its kind.
        target = open_target(TWO)
        try:
            for failure in data["failures"]:
                fixture = load_fixture(failure["fixture"])
                assert Path(failure["fixture"]).parent == fixtures
                assert fixture.kind == failure["kind"]
                keys = {f"{fixture.property}/{f.code}" if f.code else fixture.property
                        for f in replay(fixture, target).failures}  # fmt: skip
                assert failure["kind"] in keys
        finally:
            target.close()
        assert f"campaign {campaign}" in done.stdout and "FAILED count.agrees" in done.stdout
        html = (report / "report.html").read_text(encoding="utf-8")
        assert html.count('class="failure"') == len(kinds) and 'class="machines"' in html
        # A machine's own report is the campaign's too.
        b_report = json.loads((tmp_path / "b" / "report" / "report.json").read_text(encoding="utf-8"))
        assert {f["kind"] for f in b_report["failures"]} <= set(kinds)
    finally:
        shared.clear()
    assert not shared.exists()


def test_a_kind_is_claimed_once(redis_url: str) -> None:
    from ctxmodel.fuzz.results import FailureRecord

    shared = SharedCampaign(redis_url, f"test-{uuid.uuid4().hex[:8]}")
    record = FailureRecord(
        property="p", op="normalize", clause="c", findings=("x",), params={"messages": []}, observed=None,
        target_failure=None, worker=0, found_at=0.0, examples_until_failure=1, kind="p/code",
    )  # fmt: skip
    try:
        shared.join({"name": "t", "version": "1"}, {}, [], {"seed": 1, "workers": 1}, time.time())
        assert shared.claim(record, {"property": "p"}) is True
        assert shared.claim(record, {"property": "p", "other": True}) is False
        assert shared.known() == {"p/code"}
        ((kept, fixture),) = shared.kinds()
        assert kept.key == "p/code" and fixture == {"property": "p"}
        with pytest.raises(UsageError, match="is a campaign on t 1"):
            SharedCampaign(redis_url, shared.name).join({"name": "u", "version": "2"}, {}, [], {}, time.time())
    finally:
        shared.clear()


def test_a_campaign_needs_redis_and_a_plain_name(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs --db redis"):
        check_name("nightly", str(tmp_path / "db"))
    with pytest.raises(UsageError, match="expected letters"):
        check_name("a b", "redis://127.0.0.1:1/0")
    with pytest.raises(UsageError, match="needs --db redis"):
        run_campaign(CampaignConfig(target_spec="reference", max_examples=1, database=str(tmp_path), campaign="x"))
    done = subprocess.run(
        [sys.executable, "-m", "ctxmodel", "fuzz", "report", "--db", "redis://127.0.0.1:1/0", "--campaign", "x"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("ctxmodel: ") and len(done.stderr.splitlines()) == 1
