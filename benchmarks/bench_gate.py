"""Speed of the gate, printed as figures measured in one run (no assertions: see HACKING.md).

1. Examples per second of the full property suite against ``reference`` (ci profile, no database),
   and where that time goes: drawing inputs (Hypothesis and the strategies), the target's calls,
   the checks' judging, shrinking.
2. The process transport's own cost per request: ``ProcessTarget.call`` against a bare JSON-lines
   loop (``json.dumps`` + write + ``readline`` + ``json.loads``) over the same kind of pipe to the
   same echo child. Goal: a ratio of at most 1.5.
3. ``ctxmodel check --profile ci`` wall time at ``--jobs 1`` and ``--jobs 2``, one after the other,
   against ``reference`` and the node example (``--exec``). Goal: ``--jobs 2`` in at most 25 s where
   ``--jobs 1`` takes 46 s, a ratio of 0.54 or less on two idle cores.

    .venv/bin/python benchmarks/bench_gate.py [--max-examples N] [--requests N] [--skip-suite]
        [--skip-transport] [--skip-jobs] [--jobs N] [--exec]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NODE_TARGET = ROOT / "examples" / "targets" / "node" / "target.js"

ECHO = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'id': r['id'], 'result': r['params']}) + '\\n')\n"
    "    sys.stdout.flush()\n"
)


def history(n: int = 20) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in src/app.py, please."}]
    for i in range(n):
        tool_id = f"toolu_{i:04d}"
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {i}: reading the file."},
                    {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"path": f"src/m{i}.py"}},
                ],
                "ts": 1_700_000_000_000 + i,
            }
        )
        out.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": "x = 1\n" * 40},
                    {"type": "text", "text": "<environment_details>cwd: /repo</environment_details>"},
                ],
            }
        )
    return out


class Phases:
    """Seconds by phase, taken by wrapping the engine's own seams (``gate.run_property``,
    ``gate.judge``, ``gate.judge_exchange``) and the target's ``call``. Everything a property does
    after its first failing judgement is shrinking, as the engine counts shrink steps (Hypothesis
    goes on looking for other kinds there too); before it, what the engine does outside ``judge``
    (Hypothesis drawing and managing inputs, the strategies) is generation."""

    def __init__(self) -> None:
        self.seconds = {"run": 0.0, "judge": 0.0, "calls": 0.0, "check": 0.0, "check calls": 0.0, "shrinking": 0.0}
        self.failed_at: float | None = None
        self.in_check = False

    @property
    def shrinking(self) -> bool:
        return self.failed_at is not None

    def lines(self) -> list[str]:
        s = self.seconds
        judging = s["check"] - s["check calls"]
        parts = {
            "generation (Hypothesis, strategies)": s["run"] - s["shrinking"] - s["judge"],
            "target calls": s["calls"],
            "judging (the checks)": judging,
            "probe and copies": s["judge"] - s["calls"] - judging,
            "shrinking (after a first failure)": s["shrinking"],
        }
        total = s["run"] or 1.0
        return [f"  {name:<36} {sec:6.1f} s  {sec / total:5.1%}" for name, sec in parts.items()]


@contextmanager
def timed_phases(phases: Phases) -> Iterator[None]:
    from ctxmodel import gate

    run_property, judge, judge_exchange = gate.run_property, gate.judge, gate.judge_exchange

    def timed_run(prop: Any, target: Any, *args: Any, **kw: Any) -> Any:
        phases.failed_at = None
        original = target.call

        def call(op: str, params: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            try:
                reply: dict[str, Any] = original(op, params)
                return reply
            finally:
                spent = time.perf_counter() - started
                if not phases.shrinking:
                    phases.seconds["calls"] += spent
                    phases.seconds["check calls"] += spent if phases.in_check else 0.0

        target.call = call
        started = time.perf_counter()
        try:
            return run_property(prop, target, *args, **kw)
        finally:
            ended = time.perf_counter()
            phases.seconds["run"] += ended - started
            if phases.failed_at is not None:
                phases.seconds["shrinking"] += ended - phases.failed_at
            del target.call

    def timed_judge(*args: Any, **kw: Any) -> Any:
        if phases.shrinking:
            return judge(*args, **kw)
        started = time.perf_counter()
        verdict = judge(*args, **kw)
        ended = time.perf_counter()
        phases.seconds["judge"] += ended - started
        if verdict.failed:
            phases.failed_at = ended
        return verdict

    def timed_check(*args: Any, **kw: Any) -> Any:
        if phases.shrinking:
            return judge_exchange(*args, **kw)
        phases.in_check = True
        started = time.perf_counter()
        try:
            return judge_exchange(*args, **kw)
        finally:
            phases.in_check = False
            phases.seconds["check"] += time.perf_counter() - started

    gate.run_property, gate.judge, gate.judge_exchange = timed_run, timed_judge, timed_check
    try:
        yield
    finally:
        gate.run_property, gate.judge, gate.judge_exchange = run_property, judge, judge_exchange


def bench_suite(max_examples: int) -> None:
    from ctxmodel import engine
    from ctxmodel.profiles import get_profile
    from ctxmodel.properties.registry import all_properties
    from ctxmodel.targets import open_target

    target = open_target("reference")
    props = all_properties()
    phases = Phases()
    with tempfile.TemporaryDirectory() as fixtures, timed_phases(phases):
        started = time.perf_counter()
        config = engine.RunConfig(
            policies=target.description.policies,
            profile=get_profile("ci"),
            fixtures_dir=fixtures,
            max_examples=max_examples,
            database=None,
        )
        report = engine.run(props, config, target=target)
        seconds = time.perf_counter() - started
    examples = sum(o.examples for o in report.outcomes)
    statuses = {s: sum(o.status == s for o in report.outcomes) for s in ("passed", "failed", "skipped", "error")}
    print(
        f"suite on reference: {len(props)} properties, {examples} examples in {seconds:.1f} s "
        f"= {examples / seconds:.1f} examples/s ({statuses})"
    )
    slowest = sorted(report.outcomes, key=lambda o: -o.seconds)[:3]
    print("  slowest: " + ", ".join(f"{o.prop.id} {o.seconds:.1f} s" for o in slowest))
    print("  where the time goes:")
    for line in phases.lines():
        print(line)


def check_seconds(target: str, jobs: int, extra: list[str]) -> tuple[float, float, int, str]:
    """One ``ctxmodel check --profile ci`` process, with its own empty example database and fixtures
    directory so that neither run feeds the other: its wall time, the CPU time of it and its workers
    (on a shared machine, CPU seconds per wall second say how many cores the run really had), its
    exit code and summary line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(scratch, "hypothesis"))
        argv = [sys.executable, "-m", "ctxmodel", "check", "--target", target, "--profile", "ci",
                "--fixtures", os.path.join(scratch, "fx"), "--jobs", str(jobs), *extra]
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    totals = [line for line in done.stdout.splitlines() if line.startswith(tuple("0123456789"))]
    return seconds, cpu, done.returncode, totals[-1] if totals else done.stderr.strip()[-200:]


def bench_jobs(jobs: int, targets: list[str], extra: list[str]) -> None:
    for target in targets:
        one = check_seconds(target, 1, extra)
        many = check_seconds(target, jobs, extra)
        print(f"ctxmodel check --target {target} --profile ci {' '.join(extra)}".rstrip() + ":")
        for n, (wall, cpu, code, total) in ((1, one), (jobs, many)):
            print(f"  --jobs {n}  {wall:6.1f} s wall  {cpu:6.1f} s CPU ({cpu / wall:.2f} cores)  exit {code}  {total}")
        print(f"  ratio {many[0] / one[0]:.2f} (--jobs {jobs} / --jobs 1 wall; goal <= 0.54 at --jobs 2)")


def bench_transport(requests: int, params: dict[str, Any], rounds: int = 5) -> None:
    """Both loops talk to the same echo child over the same pipes, in alternating rounds (best of
    each kept), so load from other processes on a shared machine hits both alike."""
    from ctxmodel.targets.process import ProcessTarget

    size = len(json.dumps(params))
    script = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    script.write(ECHO)
    script.close()
    target = ProcessTarget(f"{shlex.quote(sys.executable)} -S {shlex.quote(script.name)}")
    proc = target._proc
    assert proc is not None and proc.stdin is not None and proc.stdout is not None
    to_child = proc.stdin.fileno()
    from_child = os.fdopen(os.dup(proc.stdout.fileno()), "rb")
    bare = harness = float("inf")
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            for i in range(requests):
                # The least any JSON-lines client does: encode, write, read a line, decode.
                os.write(to_child, json.dumps({"id": i, "op": "normalize", "params": params}).encode() + b"\n")
                reply = json.loads(from_child.readline())
                assert reply["id"] == i
            bare = min(bare, time.perf_counter() - started)
            started = time.perf_counter()
            for _ in range(requests):
                target.call("normalize", params)
            harness = min(harness, time.perf_counter() - started)
    finally:
        from_child.close()
        target.close()
        os.unlink(script.name)
    per_bare = bare / requests * 1e6
    per_harness = harness / requests * 1e6
    print(f"transport, {requests} requests of {size / 1024:.1f} KB (best of {rounds} alternating rounds):")
    print(f"  bare JSON-lines loop  {per_bare:8.1f} us/request")
    print(f"  ProcessTarget.call    {per_harness:8.1f} us/request")
    print(f"  ratio {harness / bare:.2f}x (goal <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=60, help="examples per property (ci default: 60)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--skip-transport", action="store_true")
    parser.add_argument("--skip-jobs", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="compared with --jobs 1 (default: 2)")
    parser.add_argument("--exec", action="store_true", help="the node example too (exec: target)")
    args = parser.parse_args()
    if not args.skip_transport:
        bench_transport(args.requests, {"messages": history()})
        bench_transport(args.requests, {"messages": [{"role": "user", "content": "hi"}]})
    if not args.skip_suite:
        bench_suite(args.max_examples)
    if not args.skip_jobs:
        targets = ["reference"] + ([f"exec:node {shlex.quote(str(NODE_TARGET))}"] if args.exec else [])
        bench_jobs(args.jobs, targets, [] if args.max_examples == 60 else ["--max-examples", str(args.max_examples)])


if __name__ == "__main__":
    main()
