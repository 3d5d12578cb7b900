"""Never green by accident: a replay with nothing to replay, a target lacking ops a CI
needs, and a run whose every property of an op was skipped say so (contract §9 exit codes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ONLY = "python:tests.targets.declares:NormalizeOnly"


def _ctxmodel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxmodel", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_replay_of_a_directory_without_fixtures_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a fixture")
    run = _ctxmodel("replay", str(tmp_path))
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and "no fixture" in run.stderr


def test_require_ops_exits_3_when_the_target_lacks_one(tmp_path: Path) -> None:
    run = _ctxmodel("check", "--target", ONLY, "--require-ops", "normalize,recover", "--fixtures", str(tmp_path))
    assert run.returncode == 3, run.stdout + run.stderr
    assert "recover" in run.stderr and "--require-ops" in run.stderr
    assert "passed" not in run.stdout and "FAILED" not in run.stdout  # before any property
    ok = _ctxmodel("check", "--target", ONLY, "--require-ops", "normalize", "--property", "normalize.idempotent",
                   "--max-examples", "3", "--profile", "ci", "--fixtures", str(tmp_path))  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_an_op_whose_every_property_was_skipped_is_named_in_the_summary(tmp_path: Path) -> None:
    run = _ctxmodel("check", "--target", ONLY, "--ops", "recover", "--profile", "ci", "--fixtures", str(tmp_path))
    summary = run.stdout.strip().splitlines()
    assert any("every property of recover skipped: the target has no such op" in line for line in summary), run.stdout
