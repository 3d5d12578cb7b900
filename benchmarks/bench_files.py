"""``validate``, ``repair``, ``count`` and ``recover`` on whole files against the JSON floor.

In one run, on generated stored histories of about 1.8 MB (a real task file's size) and 200 MB (an
extreme one), each command runs as a fresh process, as a user runs it, and is compared with the
floor: a fresh ``python`` that ``json.load``s the file and ``json.dump``s it to another file. For
each it prints the wall time, the ratio to the floor, and the peak resident memory (``ru_maxrss``
of that one process) as a multiple of the file size.

The files are the Zoo/Roo mix of ``bench_history.py`` (file reads, command output, diffs, parallel
calls, images, thinking blocks, a few pairing defects), written compact as ``JSON.stringify`` does,
so ``repair`` has work to do and writes its result; ``recover`` fits the file into a 200,000-token
window (the reserve is the default 8192) and writes it too.

    .venv/bin/python benchmarks/bench_files.py [--sizes 1.8,200] [--repeat 3] [--keep DIR]

``--repeat`` applies to files under 10 MB (best of N); bigger ones run each command once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_history import Builder

FLOOR = (
    "import json, sys\n"
    "with open(sys.argv[1]) as f:\n    v = json.load(f)\n"
    "with open(sys.argv[2], 'w') as f:\n    json.dump(v, f)\n"
)
#: Runs ``argv`` and prints the peak RSS (KiB) of that child alone.
PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "sys.stderr.buffer.write(done.stderr[-2000:])\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
WINDOW = "200000"


def build(path: Path, size: int, seed: int = 0) -> int:
    """Messages of the ``bench_history`` mix until the file holds about ``size`` bytes."""
    builder = Builder(seed)
    messages = builder.history(1)
    total = len(json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode())
    while total < size:
        turn = builder.turn()
        messages.extend(turn)
        total += len(json.dumps(turn, ensure_ascii=False, separators=(",", ":")).encode()) - 1
    with path.open("w", encoding="utf-8") as handle:
        json.dump(messages, handle, ensure_ascii=False, separators=(",", ":"))
    return len(messages)


def measure(argv: list[str]) -> tuple[float, int, int]:
    """Wall seconds, exit code and peak RSS in bytes of one run of ``argv`` in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    code, rss = (int(x) for x in done.stdout.split())
    if code not in (0, 1):  # validate exits 1 when the request would be refused
        raise SystemExit(f"{' '.join(argv)}: exit {code}: {done.stderr}")
    return elapsed, code, rss * 1024


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    ctxmodel = [sys.executable, "-m", "ctxmodel"]
    return {
        "json.load + json.dump": [sys.executable, "-c", FLOOR, str(path), str(out)],
        "validate": [*ctxmodel, "validate", str(path)],
        "repair -o": [*ctxmodel, "repair", str(path), "-o", str(out)],
        "count": [*ctxmodel, "count", str(path)],
        f"recover --context-window {WINDOW} -o": [
            *ctxmodel, "recover", str(path), "--context-window", WINDOW, "-o", str(out)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1.8,200", help="file sizes in MB, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build the files here and keep them")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="ctxmodel-bench-files-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    for size_mb in (float(s) for s in args.sizes.split(",")):
        path = work / f"history-{size_mb:g}MB.json"
        if not path.exists():
            started = time.perf_counter()
            n = build(path, int(size_mb * 1_000_000))
            print(f"built {path} ({n} messages) in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        size = path.stat().st_size
        repeat = args.repeat if size < 10_000_000 else 1
        out = work / "out.json"
        floor = 0.0
        for name, command in commands(path, out).items():
            runs = [measure(command) for _ in range(repeat)]
            best = min(runs)
            seconds, code, rss = best
            if not floor:
                floor = seconds
            rows.append(
                f"| {size / 1e6:.1f} MB | `{name}` | {seconds:.2f} s | {seconds / floor:.1f}x | "
                f"{rss / 2**20:.0f} MB ({rss / size:.1f}x) | {code} |"
            )
            print(rows[-1], flush=True)
    print()
    print("| file | command | time (best) | / floor | peak RSS (x file) | exit |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
