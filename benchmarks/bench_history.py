"""Speed and memory of the history pipeline on a 20,000-message stored history.

What it measures, in one run, on one generated file (about 50 MB of JSON, a realistic Zoo/Roo mix:
file reads, command output, diffs, environment details, parallel calls, images, thinking blocks,
and a sprinkling of the pairing defects the normalizer repairs):

* time: ``codec.read`` + ``effective`` + ``normalize_report`` + ``validate`` + ``codec.write`` to a
  file (what ``ctxmodel normalize FILE -o OUT`` and ``ctxmodel validate`` do together), as a ratio
  to reading the file + ``json.loads`` + ``json.dumps`` + UTF-8 encode (no write). Goal <= 4.
* memory: the peak of Python allocations (``tracemalloc``) during that pipeline, file read
  included, as a ratio to the file size. Goal <= 4.

Run: ``.venv/bin/python benchmarks/bench_history.py [--messages N] [--repeat R] [--keep FILE]``.
Each timing is the median of R runs; the memory pass runs once, separately, since tracing slows
everything down.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxmodel.codec import read, write
from ctxmodel.normalize import normalize_report
from ctxmodel.oracle import validate
from ctxmodel.visibility import effective

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WORDS = (
    "const let return function import export from async await if else for while class interface type string "
    "number boolean null undefined true false user order cart total price item items id name config server "
    "request response error test expect describe it should render props state value key map filter reduce"
).split()
TOOLS = ("read_file", "execute_command", "search_files", "list_files", "apply_diff", "write_to_file")


def _code_pool(rng: random.Random) -> str:
    """A few hundred KB of code-like text; message texts are windows into it."""
    lines = []
    for n in range(6000):
        indent = "  " * rng.randint(0, 3)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))
        lines.append(f"{n % 400 + 1:4} | {indent}{words};")
    return "\n".join(lines)


class Builder:
    """A seeded generator of stored messages in the Zoo/Roo shape (domain §1)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = _code_pool(self.rng)
        self.ts = 1_772_446_500_000
        self.image = "iVBORw0KGgo" + "".join(self.rng.choice(B62) for _ in range(24_000))

    def text(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - size)
        return self.pool[start : start + size]

    def tool_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choice(B62) for _ in range(22))

    def stamp(self) -> int:
        self.ts += self.rng.randint(500, 30_000)
        return self.ts

    def env(self) -> dict[str, Any]:
        return {
            "type": "text",
            "text": "<environment_details>\n# VSCode Visible Files\nsrc/cart.ts\n\n# VSCode Open Tabs\n"
            + self.text(300)
            + "\n\n# Current Mode\n<slug>code</slug>\n<name>💻 Code</name>\n</environment_details>",
        }

    def tool_use(self, tool_id: str) -> dict[str, Any]:
        name = self.rng.choice(TOOLS)
        if name in ("apply_diff", "write_to_file"):
            body = {"path": "src/cart.ts", "diff": self.text(self.rng.randint(400, 2000))}
        elif name == "execute_command":
            body = {"command": "npx jest " + self.text(40).replace("\n", " ")}
        else:
            body = {"path": "src/" + self.rng.choice(WORDS) + ".ts"}
        return {"type": "tool_use", "id": tool_id, "name": name, "input": body}

    def tool_result(self, tool_id: str) -> dict[str, Any]:
        size = self.rng.choice((120, 400, 1200, 2100, 3000))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id}
        if self.rng.random() < 0.25:
            block["content"] = [{"type": "text", "text": self.text(size)}]
        else:
            block["content"] = "File: src/cart.ts\nLines 1-80:\n" + self.text(size)
        if self.rng.random() < 0.05:
            block["is_error"] = True
        return block

    def turn(self) -> list[dict[str, Any]]:
        """One assistant message with 1-3 calls and the user message answering it (sometimes badly)."""
        ids = [self.tool_id() for _ in range(self.rng.choice((1, 1, 1, 2, 3)))]
        content: list[dict[str, Any]] = []
        if self.rng.random() < 0.2:
            content.append({"type": "thinking", "thinking": self.text(400), "signature": self.text(120)})
        content.append({"type": "text", "text": self.text(self.rng.randint(80, 500))})
        content.extend(self.tool_use(i) for i in ids)
        assistant = {"role": "assistant", "content": content, "ts": self.stamp()}
        results = [self.tool_result(i) for i in ids]
        roll = self.rng.random()
        if roll < 0.02 and len(results) > 1:
            results.pop()  # a missing parallel result
        elif roll < 0.04:
            results.append(self.tool_result(self.tool_id()))  # an orphan
        elif roll < 0.05:
            results.append(dict(results[0]))  # a duplicate result
        reply: list[dict[str, Any]] = list(results)
        if self.rng.random() < 0.04:
            image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": self.image}}
            reply.insert(1, image)  # an image between parallel results (Zoo-Code #1774)
        reply.append(self.env())
        return [assistant, {"role": "user", "content": reply, "ts": self.stamp()}]

    def history(self, messages: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": "<task>\nFix the cart\n</task>"}, self.env()]}
        ]
        while len(out) < messages - 1:
            out.extend(self.turn())
        out.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}], "ts": self.stamp()})
        return out[:messages]


def baseline(path: Path) -> bytes:
    value = json.loads(path.read_bytes())
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


STAGES: dict[str, float] = {}


def pipeline(path: Path, out: Path, stages: dict[str, float] | None = None) -> None:
    """What ``ctxmodel normalize FILE -o OUT`` does, plus ``validate`` of its output."""
    clock = time.perf_counter
    t0 = clock()
    history = read(path)
    t1 = clock()
    request = effective(history)
    del history
    t2 = clock()
    result, _report = normalize_report(request)
    del request
    t3 = clock()
    violations = validate(result)
    t4 = clock()
    with out.open("wb") as stream:
        write(result, stream)
    t5 = clock()
    if violations:
        raise AssertionError(f"normalized history not clean: {violations[0].message}")
    if stages is not None:
        for name, start, end in (
            ("read + load", t0, t1),
            ("effective", t1, t2),
            ("normalize", t2, t3),
            ("validate", t3, t4),
            ("dump + write", t4, t5),
        ):
            stages.setdefault(name, 0.0)
            stages[name] += end - start


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write the generated history here and keep it")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "history.json"
        built = Builder(args.seed).history(args.messages)
        path.write_bytes(json.dumps(built, ensure_ascii=False).encode("utf-8"))
        del built
        size = os.path.getsize(path)
        print(f"history: {args.messages} messages, {size / 1e6:.1f} MB ({path if args.keep else 'temporary file'})")

        base = timed(lambda: baseline(path), args.repeat)
        stages: dict[str, float] = {}
        out = Path(tmp) / "normalized.json"
        ours = timed(lambda: pipeline(path, out, stages), args.repeat)
        print(f"json.loads + json.dumps:           {base:7.3f} s (median of {args.repeat})")
        print(f"load+effective+normalize+validate+dump: {ours:7.3f} s (median of {args.repeat})")
        for name, total in stages.items():
            print(f"  {name:<14} {total / args.repeat:7.3f} s")
        time_ratio = ours / base

        mem_base = peak(lambda: baseline(path))
        mem_ours = peak(lambda: pipeline(path, out))
        print(f"peak memory, json baseline:  {mem_base / 1e6:7.1f} MB ({mem_base / size:.2f}x file)")
        print(f"peak memory, pipeline:       {mem_ours / 1e6:7.1f} MB")
        mem_ratio = mem_ours / size

    print(f"TIME RATIO   {time_ratio:.2f}  (goal <= 4)")
    print(f"MEMORY RATIO {mem_ratio:.2f}  (goal <= 4)")
    return 0 if time_ratio <= 4 and mem_ratio <= 4 else 1


if __name__ == "__main__":
    sys.exit(main())
