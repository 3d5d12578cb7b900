"""How fast the strategies generate, and how much of a property run generation takes.

Prints, in one run: histories per second for ``histories()``, ``well_formed_histories()`` and
``realistic_histories()``; and for a property checking the reference pipeline (``effective`` +
``normalize`` + ``validate``) on ``histories()``, the share of the run spent generating vs checking.
CPU time (``time.process_time``) is used so a busy machine distorts the ratios less.

    .venv/bin/python benchmarks/bench_strategies.py [N]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ctxmodel.codec import load
from ctxmodel.normalize import normalize
from ctxmodel.oracle import validate
from ctxmodel.strategies import histories, realistic_histories, recovery_requests, well_formed_histories
from ctxmodel.visibility import effective


def _run(strategy: st.SearchStrategy[Any], n: int, check: Callable[[Any], None]) -> tuple[int, float, float, int]:
    """Examples run, total CPU seconds, CPU seconds inside ``check``, messages seen."""
    seen = [0, 0]
    in_check = [0.0]

    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(value: Any) -> None:
        seen[0] += 1
        messages = value["messages"] if isinstance(value, dict) else value
        seen[1] += len(messages)
        t = time.process_time()
        check(value)
        in_check[0] += time.process_time() - t

    t0 = time.process_time()
    prop()
    return seen[0], time.process_time() - t0, in_check[0], seen[1]


def _pipeline(history: list[dict[str, Any]]) -> None:
    validate(normalize(effective(load(history))))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    print(f"{'strategy':<28} {'examples':>8} {'msgs/ex':>8} {'ex/s':>8}")
    for name, strategy, count in (
        ("histories()", histories(), n),
        ("well_formed_histories()", well_formed_histories(), n),
        ("recovery_requests()", recovery_requests(), n // 3),
        ("realistic_histories()", realistic_histories(), max(5, n // 20)),
    ):
        done, total, _, msgs = _run(strategy, count, lambda _: None)
        print(f"{name:<28} {done:>8} {msgs / done:>8.1f} {done / total:>8.1f}")
    print()
    print("a property run: reference effective + normalize + validate on each example")
    for name, strategy, count in (("histories()", histories(), n),
                                  ("realistic_histories()", realistic_histories(), max(5, n // 20))):
        done, total, checking, _ = _run(strategy, count, _pipeline)
        gen = total - checking
        print(f"  {name:<24} {done} examples: generating {100 * gen / total:5.1f}%  checking "
              f"{100 * checking / total:5.1f}%  (generate/check ratio {gen / max(checking, 1e-9):.2f})")


if __name__ == "__main__":
    main()
