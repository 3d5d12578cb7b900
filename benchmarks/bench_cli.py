"""A command on a real-sized file against a JSON round trip of it, each as a fresh process.

On ordinary real files (1.5-1.8 MB) every command spent most of its time starting: ``validate``
0.6 s against a 0.07 s JSON round trip, and loading the tokenizer added about 0.8 s to
``count``/``recover``. This script times, in one run, alternating, best of ``--repeat``, each as a
new ``python`` process on one generated file of about ``--size`` bytes (the Zoo/Roo mix of
``bench_history.py``: file reads, command output, diffs, parallel calls, images, thinking):

- the baseline: ``python -c`` reading the file, ``json.loads`` and ``json.dumps`` (the JSON round
  trip, interpreter start included);
- ``python -m ctxmodel validate FILE`` and ``show FILE`` (goal: <= 3x the baseline);
- ``count FILE`` with the tokenizer's prepared ranks, and with them off (``CTXMODEL_CACHE_DIR=""``,
  the bundled file parsed as before), to show what the prepared form saves (no goal: it is the
  same count either way).

``--imports`` also prints the slowest imports of ``validate`` (``python -X importtime``), so a heavy
top-level import is visible.

    .venv/bin/python benchmarks/bench_cli.py [--size 1800000] [--repeat 5] [--imports] [--before DIR]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_history import Builder

GOAL = 3.0
ROUND_TRIP = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    json.dumps(json.loads(f.read()))\n"


def build(path: Path, size: int, seed: int = 0) -> int:
    """Messages of the bench_history mix until the file holds about ``size`` bytes."""
    builder = Builder(seed)
    messages = builder.history(1)
    total = len(json.dumps(messages))
    while total < size:
        turn = builder.turn()
        messages.extend(turn)
        total += len(json.dumps(turn)) + 4
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return len(messages)


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    """Seconds of one process. Run from ``cwd`` (not the checkout): ``python -m`` puts the working
    directory first on ``sys.path``, which would shadow ``--before``'s ``PYTHONPATH``."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # validate exits 1 when the request would be refused
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode(errors='replace')}")
    return elapsed


def slowest_imports(path: Path, top: int = 15) -> list[tuple[int, str]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ctxmodel", "validate", str(path)],
        cwd=path.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    rows: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if not name.startswith("  "):  # top-level imports only (nested ones are in their parents)
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=1_800_000, help="bytes of the generated history file")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--imports", action="store_true", help="print the slowest top-level imports of validate")
    parser.add_argument(
        "--before",
        metavar="DIR",
        help="also time validate/show/count with PYTHONPATH=DIR "
        "(a checkout of an earlier commit: git archive COMMIT | tar -x -C DIR)",
    )
    args = parser.parse_args()
    py = sys.executable
    # What an installed package has: bytecode. An editable install run with PYTHONDONTWRITEBYTECODE
    # (this machine's default) compiles every ctxmodel module from source in every process.
    root = Path(__file__).resolve().parent.parent
    for package in ("ctxmodel", "strategies", "properties"):
        compileall.compile_dir(str(root / package), quiet=1)
    print("ctxmodel, strategies and properties byte-compiled first (as a wheel install is)")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "api_conversation_history.json"
        n = build(path, args.size)
        print(f"file: {n:,} messages, {path.stat().st_size / 1e6:.2f} MB")
        no_prepared = {**os.environ, "CTXMODEL_CACHE_DIR": ""}
        runs: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "JSON round trip (python -c)": ([py, "-c", ROUND_TRIP, str(path)], None),
            "ctxmodel validate FILE": ([py, "-m", "ctxmodel", "validate", str(path)], None),
            "ctxmodel show FILE": ([py, "-m", "ctxmodel", "show", str(path)], None),
            "ctxmodel count FILE": ([py, "-m", "ctxmodel", "count", str(path)], None),
            "ctxmodel count FILE, ranks parsed": ([py, "-m", "ctxmodel", "count", str(path)], no_prepared),
            "python -c pass (interpreter start)": ([py, "-c", "pass"], None),
        }
        if args.before:
            before = {**os.environ, "PYTHONPATH": args.before}
            for command in ("validate", "show", "count"):
                runs[f"before: ctxmodel {command} FILE"] = ([py, "-m", "ctxmodel", command, str(path)], before)
        timed(runs["ctxmodel count FILE"][0], cwd=tmp)  # writes the prepared ranks if they were missing
        times: dict[str, list[float]] = {label: [] for label in runs}
        for _ in range(args.repeat):
            for label, (argv, env) in runs.items():
                times[label].append(timed(argv, env, cwd=tmp))
        best = {label: min(t) for label, t in times.items()}
        base = best["JSON round trip (python -c)"]
        ok = True
        print("| process | seconds | / JSON round trip | goal |")
        print("|---|---|---|---|")
        for label, seconds in best.items():
            ratio = seconds / base
            goal = ""
            if label in ("ctxmodel validate FILE", "ctxmodel show FILE"):  # the goal is on the current tree
                met = ratio <= GOAL
                ok &= met
                goal = f"<= {GOAL:g}x {'OK' if met else 'MISSED'}"
            print(f"| {label} | {seconds:.3f} | {ratio:.2f}x | {goal} |")
        if args.imports:
            print("slowest top-level imports of `ctxmodel validate FILE` (cumulative microseconds):")
            for micros, name in slowest_imports(path):
                print(f"  {micros:>9,}  {name}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
