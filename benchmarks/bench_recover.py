"""Recovery against one count of the same history, at every size (goals <= 1.5x).

Two measurements, each a ratio of two timings taken in this one run, alternating, best of ``--repeat``,
with the counter's cache cleared before every timing so each counts from cold:

- **sizes**: a task, then one assistant ``tool_use`` and one user ``tool_result`` of about 800
  characters per turn, at 1,001, 16,001 and 64,001 messages by default, in two tables: results of
  plain English prose (the cheapest text to tokenize, so every pass recovery makes besides the
  count weighs the most: the harder ratio), and of mixed log lines, code and CJK. The budget
  is half the history's count, so recovery hides about half the messages. Baseline: one count of
  the same history (``request_tokens``: system prompt and effective history, the recount of
  contract §4). Goal: ``recover`` <= 1.5x the count at every size (it was quadratic,
  6.3x at 16,001 messages).
- **4mb**: the 4 MB history: a task, an assistant ``tool_use``, and a user ``tool_result`` of
  about 4 MB of mixed text (prose, code, CJK, emoji, special-token text, long runs), recovered into
  a 100,000-token window with a 30,000 reserve. Baseline: one ``encode_ordinary`` of all the
  history's text with the same verified ``o200k_base`` ranks. Goal: <= 1.5x.

    .venv/bin/python benchmarks/bench_recover.py [--only sizes|4mb] [--messages 1001,16001,64001]
                                                 [--texts both|prose|mixed] [--size 4000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

from ctxmodel.codec import load
from ctxmodel.model import History
from ctxmodel.recover import Recovery, recover
from ctxmodel.tokens import get_counter, get_encoding, request_tokens

GOAL = 1.5


def mixed_text(size: int) -> str:
    parts = [
        "The quick brown fox jumps over the lazy dog while the build log scrolls by. ",
        "def handler(event, context):\n    return {'status': 200, 'items': [x ** 2 for x in event]}\n",
        "日本語のテキストと絵文字 🚀🎉 混在しています。",
        "<|endoftext|> 1234567890 0xdeadbeef ",
        "=" * 120 + "\n",
        "Ünïcödé façade naïve café — “quotes” and \u2018more\u2019. ",
        "ERROR 2025-01-01T00:00:00Z worker[42]: connection reset by peer\n",
    ]
    chunk = "".join(parts)
    return (chunk * (size // len(chunk) + 1))[:size]


def history(size: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Summarise the build log and tell me why it failed."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the log."},
                {"type": "tool_use", "id": "toolu_log", "name": "read_file", "input": {"path": "build.log"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_log", "content": mixed_text(size)}],
        },
    ]


_LINES = [
    "The request to {0} returned {1} items after {2} ms; retrying the remaining {3}.",
    "def step_{0}(items):\n    return [x * {1} for x in items if x % {2} == {3}]",
    "INFO 2025-03-{2:02d}T10:{3:02d}:00Z worker[{0}]: processed batch {1} in {2}.{3}s",
    "src/module_{0}/file_{1}.py:{2}: warning: unused variable 'tmp{3}'",
    "構成ファイル {0} を読み込みました（{1} 行, {2} 件の警告）。",  # noqa: RUF001 (CJK punctuation, on purpose)
    "| {0} | {1} | {2} | {3} |",
]


def turn_text(t: int, size: int = 800) -> str:
    """About ``size`` characters that differ from turn to turn (numbers, order of the kinds)."""
    out: list[str] = [f"Result of step {t}:"]
    n = 0
    while sum(map(len, out)) < size:
        line = _LINES[(t + n) % len(_LINES)]
        out.append(line.format(t * 7 + n, (t * 13 + n) % 997, (t + n) % 28 + 1, (t * 3 + n) % 60))
        n += 1
    return "\n".join(out)[:size]


_PROSE = "The quick brown fox jumps over the lazy dog and the build goes on without any errors. "


def prose_text(t: int, size: int = 800) -> str:
    """Plain English, the cheapest text to tokenize, so recovery's own passes weigh the most."""
    return (f"Step {t}. " + _PROSE * (size // len(_PROSE) + 1))[:size]


def long_history(messages: int, mixed: bool = True) -> list[dict[str, Any]]:
    """A task, then one call and one ~800-character result per turn: ``messages`` = 1 + 2 * turns.

    ``mixed``: log lines, code, CJK (:func:`turn_text`); else plain prose (:func:`prose_text`).
    """
    text = turn_text if mixed else prose_text
    out: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing tests in this repository."}]
    for t in range((messages - 1) // 2):
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Looking at step {t}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{t:06d}",
                        "name": "read_file",
                        "input": {"path": f"src/module_{t % 50}/file_{t}.py", "limit": 200},
                    },
                ],
            }
        )
        out.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{t:06d}", "content": text(t)}]}
        )
    return out


def all_text(value: list[dict[str, Any]]) -> str:
    """Every text the history holds, joined: what one plain encode has to read."""
    out: list[str] = []
    for m in value:
        if isinstance(m["content"], str):
            out.append(m["content"])
            continue
        for b in m["content"]:
            if b["type"] == "text":
                out.append(b["text"])
            elif b["type"] == "tool_use":
                out.append(f"Tool: {b['name']}\nArguments: {b['input']}")
            elif b["type"] == "tool_result":
                out.append(f"Tool Result ({b['tool_use_id']})\n{b['content']}")
    return "\n".join(out)


def best_of(repeat: int, *runs: Callable[[], Any]) -> list[tuple[float, Any]]:
    """Each run ``repeat`` times, alternating; the best time of each, with its last result."""
    times: list[list[float]] = [[] for _ in runs]
    results: list[Any] = [None] * len(runs)
    for _ in range(repeat):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            results[i] = run()
            times[i].append(time.perf_counter() - start)
    return [(min(t), r) for t, r in zip(times, results, strict=True)]


def verdict(ratio: float) -> str:
    return "OK" if ratio <= GOAL else "MISSED"


def bench_sizes(sizes: list[int], repeat: int, mixed: bool) -> bool:
    counter = get_counter("zoo")
    ok = True
    kind = "mixed text" if mixed else "plain prose"
    print(f"| history (one call and one ~800-character result per turn; {kind}) | count | recover | ratio | hidden |")
    print("|---|---|---|---|---|")
    for n in sizes:
        messages = load(long_history(n, mixed))
        counter.clear_cache()
        total = request_tokens(messages, "", counter)
        allowed = total // 2
        window = -(-(allowed + 8192) * 10 // 9)  # floor(0.9 * window) - 8192 >= allowed, just

        def count(messages: History = messages) -> int:
            counter.clear_cache()
            return request_tokens(messages, "", counter)

        def recovery(messages: History = messages, window: int = window) -> Recovery:
            counter.clear_cache()
            return recover(messages, context_window=window, max_tokens=0, counter=counter, new_id=lambda: "bench")

        (t_count, _), (t_recover, result) = best_of(repeat, count, recovery)
        assert result.error is None, result.error
        ratio = t_recover / t_count
        ok &= ratio <= GOAL
        print(
            f"| {len(messages):,} messages | {t_count:.3f} s | {t_recover:.3f} s | {ratio:.2f}x {verdict(ratio)} "
            f"| {result.messages_removed:,} |"
        )
    return ok


def bench_4mb(size: int, repeat: int) -> bool:
    value = history(size)
    messages = load(value)
    text = all_text(value)
    encoding = get_encoding("o200k_base")
    counter = get_counter("zoo")
    encoding.encode_ordinary("warm up the encoder")

    def encode() -> int:
        return len(encoding.encode_ordinary(text))

    def recovery() -> Recovery:
        counter.clear_cache()
        return recover(messages, context_window=100_000, max_tokens=30_000, counter=counter, new_id=lambda: "bench")

    (t_encode, tokens), (t_recover, result) = best_of(repeat, encode, recovery)
    print(f"history: 3 messages, {len(text):,} characters, {tokens:,} o200k tokens")
    print(
        f"recovery: {result.prev_context_tokens:,} -> {result.new_context_tokens:,} tokens "
        f"(allowed {result.allowed:,}), hidden {result.messages_removed}, degraded {len(result.degraded)}, "
        f"error {result.error!r}"
    )
    print(f"plain encode_ordinary of all text: {t_encode:.3f} s (best of {repeat})")
    print(f"recover (cold counter cache):      {t_recover:.3f} s (best of {repeat})")
    ratio = t_recover / t_encode
    print(f"ratio recover / encode: {ratio:.2f}x (goal <= {GOAL}x) {verdict(ratio)}")
    return ratio <= GOAL


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", choices=["sizes", "4mb"])
    parser.add_argument("--messages", default="1001,16001,64001", help="history sizes, comma-separated")
    parser.add_argument(
        "--texts",
        choices=["both", "prose", "mixed"],
        default="both",
        help="sizes: results of plain prose, of mixed text, or both tables",
    )
    parser.add_argument("--size", type=int, default=4_000_000, help="characters of the 4 MB case's tool result")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load1 = os.getloadavg()[0]
    print(f"load average at start: {load1:.2f} on {os.cpu_count()} cores; best of {args.repeat}, cold caches")
    ok = True
    if args.only in (None, "sizes"):
        sizes = [int(n) for n in args.messages.split(",")]
        for mixed in {"both": (False, True), "mixed": (True,), "prose": (False,)}[args.texts]:
            ok &= bench_sizes(sizes, args.repeat, mixed)
    if args.only in (None, "4mb"):
        ok &= bench_4mb(args.size, args.repeat)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
