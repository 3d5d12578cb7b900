"""Speed of the gate, printed as figures measured in one run (no assertions: see HACKING.md).

1. Examples per second of the full property suite against ``reference`` (ci profile, no database).
2. The process transport's own cost per request: ``ProcessTarget.call`` against a bare JSON-lines
   loop (``json.dumps`` + write + ``readline`` + ``json.loads``) over the same kind of pipe to the
   same echo child. Goal: a ratio of at most 1.5.

    .venv/bin/python benchmarks/bench_gate.py [--max-examples N] [--requests N] [--skip-suite]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from typing import Any

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


def bench_suite(max_examples: int) -> None:
    from ctxmodel import gate
    from ctxmodel.profiles import get_profile
    from ctxmodel.properties.registry import all_properties
    from ctxmodel.targets import open_target

    target = open_target("reference")
    props = all_properties()
    with tempfile.TemporaryDirectory() as fixtures:
        started = time.perf_counter()
        report = gate.run_gate(
            target,
            props,
            policies=target.description.policies,
            profile=get_profile("ci"),
            fixtures_dir=fixtures,
            max_examples=max_examples,
            database=None,
        )
        seconds = time.perf_counter() - started
    examples = sum(o.examples for o in report.outcomes)
    statuses = {s: sum(o.status == s for o in report.outcomes) for s in ("passed", "failed", "skipped", "error")}
    print(
        f"suite on reference: {len(props)} properties, {examples} examples in {seconds:.1f} s "
        f"= {examples / seconds:.1f} examples/s ({statuses})"
    )
    slowest = sorted(report.outcomes, key=lambda o: -o.seconds)[:3]
    print("  slowest: " + ", ".join(f"{o.prop.id} {o.seconds:.1f} s" for o in slowest))


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
    args = parser.parse_args()
    bench_transport(args.requests, {"messages": history()})
    bench_transport(args.requests, {"messages": [{"role": "user", "content": "hi"}]})
    if not args.skip_suite:
        bench_suite(args.max_examples)


if __name__ == "__main__":
    main()
