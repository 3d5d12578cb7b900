"""Every exit path of ``ctxmodel check`` prints the summary and the seed and writes the JUnit file
that was asked for, an interrupt included (contract §9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

CTXMODEL = [sys.executable, "-m", "ctxmodel"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_interrupt_still_prints_the_summary_and_seed_and_writes_junit(tmp_path: Path, jobs: str) -> None:
    junit = tmp_path / "gate.xml"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [*CTXMODEL, "check", "--target", "reference", "--profile", "ci", "--seed", "3",
         "--fixtures", str(tmp_path / "fx"), "--junit", str(junit), "--jobs", jobs],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=Path(__file__).parents[2],
        start_new_session=True,
        # Interruptible whatever this process inherited (a job started with `&` ignores SIGINT).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    # Wait until the run has started judging (its first per-property line), then press Ctrl-C.
    deadline = time.monotonic() + 120
    seen = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen += line
        if line.startswith("  ") and ":" in line:
            break
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group, workers included
    out, err = proc.communicate(timeout=120)
    out = seen + out
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    assert "the run stopped early: interrupted" in out
    assert "seed 3 (rerun with --seed 3 --profile ci)" in out
    assert "never-run" in out
    assert "Traceback" not in err
    root = ElementTree.parse(junit).getroot()
    assert int(root.get("tests", "0")) > 30 and int(root.get("skipped", "0")) >= 1
