"""Time to a verdict on a failing target, printed as figures measured in one run (no assertions).

For each bug variant of the zoo (``tests/quality/zoo``), one ``ctxmodel check --profile ci --jobs 2``
as a user runs it: the wall time from start to exit, which is when every kind the run meets has
been found, shrunk and written. Goal: each within 60 s on two idle cores. Prints one row per
variant (seconds, exit code, fixtures written), then the median, the worst and how many met the
goal.

    .venv/bin/python benchmarks/bench_verdict.py [--sample N] [--seed S] [--jobs J] [VARIANT ...]

``--sample N`` takes every k-th variant so that N are run (the whole zoo takes tens of minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 60.0


def bug_variants() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.quality.zoo.run import declared

    return [name for name, v in declared().items() if v.expected == "bug"]


def verdict(name: str, seed: int, jobs: int) -> tuple[float, int, int]:
    """(wall seconds, exit code, fixtures written) of one check of ``name``."""
    with tempfile.TemporaryDirectory() as scratch:
        fixtures = Path(scratch) / "fx"
        command = [sys.executable, "-m", "ctxmodel", "check", "--target", f"python:tests.quality.zoo.{name}",
                   "--profile", "ci", "--jobs", str(jobs), "--seed", str(seed), "--fixtures", str(fixtures)]
        env = {"HYPOTHESIS_STORAGE_DIRECTORY": str(Path(scratch) / "hypothesis")}
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **env})
        seconds = time.monotonic() - started
        return seconds, done.returncode, len(list(fixtures.glob("*.json"))) if fixtures.is_dir() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", help="zoo bug variants (default: every one)")
    parser.add_argument("--sample", type=int, help="run about N variants, evenly spread")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    names = args.variants or bug_variants()
    if args.sample and args.sample < len(names):
        step = len(names) / args.sample
        names = [names[int(i * step)] for i in range(args.sample)]
    times: list[float] = []
    print(f"{'variant':40} {'seconds':>8} {'exit':>5} {'fixtures':>9}")
    for name in names:
        seconds, code, written = verdict(name, args.seed, args.jobs)
        times.append(seconds)
        flag = "" if seconds <= GOAL_SECONDS else "  over the goal"
        print(f"{name:40} {seconds:8.1f} {code:5d} {written:9d}{flag}", flush=True)
    within = sum(t <= GOAL_SECONDS for t in times)
    print(f"\n{len(times)} variants at --profile ci --jobs {args.jobs} --seed {args.seed}: median "
          f"{statistics.median(times):.1f} s, worst {max(times):.1f} s; {within}/{len(times)} within the "
          f"{GOAL_SECONDS:.0f} s goal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
