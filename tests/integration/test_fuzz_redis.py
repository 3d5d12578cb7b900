"""Distributed campaigns: worker A finds a failure; worker B, started afterwards on another
"machine" with the same ``--db redis://…``, replays it on its first examples.

Uses ``CTXMODEL_REDIS_URL`` when set (``.ci/redis.sh`` exports it), else starts a throwaway
``redis-server`` on a free 127.0.0.1 port; skipped, saying why, when neither is available.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxmodel.fixtures import load_fixture
from ctxmodel.fuzz.campaign import CampaignConfig, run_campaign

#: Campaigns are the slow tier (python -m pytest -m slow).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "python:tests.targets.broken_normalize:UnmarkedSynthetic"
PROPERTY = "normalize.synthetic-marked"




def _campaign(tmp: Path, name: str, db: str, seed: int) -> CampaignConfig:
    return CampaignConfig(
        target_spec=BROKEN,
        max_examples=300,
        workers=1,
        database=db,
        fixtures_dir=str(tmp / name / "fixtures"),
        report_dir=str(tmp / name / "report"),
        property_ids=(PROPERTY,),
        agent_loop=False,
        seed=seed,
    )


def test_worker_b_replays_what_worker_a_found(redis_url: str, tmp_path: Path) -> None:
    import redis

    os.chdir(ROOT)
    # Start from an empty campaign namespace: B must get the failure from A, not from an earlier run.
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(b"ctxmodel-fuzz:*"):
        client.delete(key)
    quiet = open(os.devnull, "w")
    a = run_campaign(_campaign(tmp_path, "a", redis_url, seed=5), out=quiet, tty=False)
    assert a.exit_code == 1
    assert [f.property for f in a.failures] == [PROPERTY]
    # B: a separate campaign (its own worker process, other seed), started after A finished.
    b = run_campaign(_campaign(tmp_path, "b", redis_url, seed=987654), out=quiet, tty=False)
    assert b.exit_code == 1
    assert b.failures[0].examples_until_failure <= 5
    fa = load_fixture(a.failures[0].fixture or "")
    fb = load_fixture(b.failures[0].fixture or "")
    assert fb.params == fa.params  # the very input A shrunk to
    assert b.database == redis_url
    assert client.keys(b"ctxmodel-fuzz:*"), "nothing was stored in Redis"
