"""The process transport's own cost: ``ProcessTarget.call`` against a bare JSON-lines loop.

An ``exec:`` target is a child speaking JSON lines (contract §7). The least any client of such a
child does per request is: encode the request, write it, read one line, decode it. That bare loop is
the baseline; ``ctxmodel.targets.process.ProcessTarget.call`` adds a deadline (the watchdog), the id
check, the strict decoder and the reply-size cap. Both talk to the *same* echo child over the *same*
pipes, in alternating rounds, best of ``--rounds`` kept, so load from other processes on a shared
machine hits both alike. Goal: ratio <= 1.5 for every child and size.

Children: a Python echo (``python -S``) and, when ``node`` is on the PATH, a Node.js one (the
language most agents in the field are written in). Sizes: a one-message request, a ~10 KB history
and a ~1 MB history (``--sizes`` in KB, 0 meaning the one-message request).

    .venv/bin/python benchmarks/bench_process.py [--requests 2000] [--rounds 5] [--sizes 0,10,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ctxmodel.targets.process import ProcessTarget

GOAL = 1.5

#: Both echoes answer ``describe`` (protocol 1, the handshake ProcessTarget makes) and echo any
#: other request's params back as its result.
PYTHON_ECHO = (
    "import sys, json\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    result = {'protocol': 1, 'name': 'echo'} if r['op'] == 'describe' else r['params']\n"
    "    sys.stdout.write(json.dumps({'id': r['id'], 'result': result}) + '\\n')\n"
    "    sys.stdout.flush()\n"
)
NODE_ECHO = (
    "const rl = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });\n"
    "rl.on('line', (line) => {\n"
    "  const r = JSON.parse(line);\n"
    "  const result = r.op === 'describe' ? { protocol: 1, name: 'echo' } : r.params;\n"
    "  process.stdout.write(JSON.stringify({ id: r.id, result }) + '\\n');\n"
    "});\n"
)


def history(kb: int) -> list[dict[str, Any]]:
    """About ``kb`` KB of a tool-using history (0: one user message)."""
    if kb <= 0:
        return [{"role": "user", "content": "hi"}]
    out: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in src/cart.ts."}]
    n = 0
    while len(json.dumps(out)) < kb * 1024:
        tid = f"toolu_{n:06d}"
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading file {n}."},
                    {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": f"src/f{n}.ts"}},
                ],
            }
        )
        out.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": f"export const value{n} = {n};\n" * 20},
                ],
            }
        )
        n += 1
    return out


def bench(command: str, params: dict[str, Any], requests: int, rounds: int) -> tuple[float, float]:
    """Best seconds per request of the bare loop and of ``ProcessTarget.call``, same child."""
    target = ProcessTarget(command)
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
    return bare / requests, harness / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per round (fewer for big sizes)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="0,10,1000", help="request sizes in KB, comma-separated (0: one message)")
    args = parser.parse_args()
    print(
        f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
        f"best of {args.rounds} alternating rounds"
    )
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        children: list[tuple[str, str]] = []
        py = Path(tmp) / "echo.py"
        py.write_text(PYTHON_ECHO)
        children.append(("python echo", f"{shlex.quote(sys.executable)} -S {shlex.quote(str(py))}"))
        node = shutil.which("node")
        if node:
            js = Path(tmp) / "echo.js"
            js.write_text(NODE_ECHO)
            children.append(("node echo", f"{shlex.quote(node)} {shlex.quote(str(js))}"))
        else:
            print("node not found: the Node.js echo is skipped")
        print("| child | request | bare loop | ProcessTarget.call | ratio |")
        print("|---|---|---|---|---|")
        for kb in (int(s) for s in args.sizes.split(",")):
            params = {"messages": history(kb)}
            size = len(json.dumps(params))
            # Keep each round to about the same bytes: fewer requests for big ones.
            requests = max(20, min(args.requests, args.requests * 10 * 1024 // max(size, 1)))
            for label, command in children:
                bare, harness = bench(command, params, requests, args.rounds)
                ratio = harness / bare
                ok &= ratio <= GOAL
                shown = f"{size:,} B" if size < 1024 else f"{size / 1024:,.1f} KB"
                print(
                    f"| {label} | {shown} x {requests} | {bare * 1e6:,.1f} us | {harness * 1e6:,.1f} us "
                    f"| {ratio:.2f}x {'OK' if ratio <= GOAL else 'MISSED'} |"
                )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
