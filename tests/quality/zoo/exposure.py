"""How often one drawn input exposes a variant: a property's own strategy, the judge in process, no
search and no shrinking.

A 60-example run detects a bug about ``1 - (1 - p) ** 60`` of the time when a share ``p`` of the
inputs expose it (a little less: Hypothesis's first examples are small ones), so this tells a
detection that is luck from one that is not, at a cost of seconds rather than a zoo run.

    .venv/bin/python -m tests.quality.zoo.exposure recover.degraded-shrink bug_notice_grows_block [-n 300]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter


def main(argv: list[str] | None = None) -> int:
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from ctxmodel import gate, partition
    from ctxmodel.policies import resolve
    from ctxmodel.properties.registry import get
    from ctxmodel.targets import open_target

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("property")
    parser.add_argument("variant", help="a zoo module name, or a full target spec (python:..., exec:...)")
    parser.add_argument("-n", type=int, default=300, help="inputs drawn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cells", action="store_true",
                        help="also count the input-partition cells of the exposing inputs (ctxmodel.partition)")
    args = parser.parse_args(argv)
    spec = args.variant if ":" in args.variant else f"python:tests.quality.zoo.{args.variant}"
    prop = get(args.property)
    target = open_target(spec, in_process=True)
    policies = resolve(target.description.policies)
    drawn = exposed = 0
    cells: Counter[str] = Counter()

    @seed(args.seed)
    @settings(max_examples=args.n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(prop.inputs(policies))
    def probe(params: dict[str, object]) -> None:
        nonlocal drawn, exposed
        drawn += 1
        verdict = gate.judge(prop, target, dict(params), policies=policies, tokenizer=target.description.tokenizer)
        hit = any(f.severity == "fail" for f in verdict.findings)
        exposed += hit
        if hit and args.cells:
            cells.update(partition.cells_of(prop.op, dict(params)))

    probe()
    share = exposed / max(drawn, 1)
    print(f"{spec} on {prop.id}: {exposed}/{drawn} inputs expose it; "
          f"a 60-example run detects it about {100 * (1 - (1 - share) ** 60):.0f}% of the time")
    for cell, n in cells.most_common():
        print(f"  {n:4d}  {cell}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
