"""Does a surviving mutant change anything the gate's inputs reach? The mutated reference against the
reference on the gate's own drawn inputs, no property involved.

A survivor that no property killed is either a gap (a property that should have seen the change, or
an input that should have been drawn) or a change nothing reaches. This tells them apart in seconds:
it draws each op's inputs from every property of that op (``Property.inputs``, the gate's own
strategies, fixed seed), calls the in-process reference with the mutant off and on, and counts the
inputs whose result differs (fresh ids written as ``ID``: recover's marker ids are random). Zero on
hundreds of inputs: nothing the gate draws reaches the change (equivalent, or unreachable from the
gate's inputs); more than zero: look at those inputs with the judge.

Run it in the mutation workdir that ``run.py`` left (its ``mutants/`` holds mutmut's trampolines):

    .venv/bin/python -m tests.quality.mutation.differential --workdir /tmp/ctxmodel-mutation \\
        --ops recover ctxmodel.recover.x__quick_fit__mutmut_100 ...
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from typing import Any

_ID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("mutants", nargs="+", help="mutmut names, e.g. ctxmodel.recover.x__shrink__mutmut_73")
    parser.add_argument("--workdir", default="/tmp/ctxmodel-mutation")
    parser.add_argument("--ops", default="recover", help="comma-separated ops whose properties' inputs are drawn")
    parser.add_argument("-n", type=int, default=40, help="inputs drawn per property")
    args = parser.parse_args(argv)
    os.environ["MUTANT_UNDER_TEST"] = ""
    sys.path.insert(0, os.path.join(args.workdir, "mutants"))

    from hypothesis import HealthCheck, Phase, given, seed, settings

    from ctxmodel.policies import resolve
    from ctxmodel.properties.registry import all_properties
    from ctxmodel.targets.reference import ReferenceTarget

    ops = set(args.ops.split(","))
    policies = resolve({})
    inputs: list[tuple[str, dict[str, Any]]] = []
    for prop in (p for p in all_properties() if p.op in ops):
        drawn: list[dict[str, Any]] = []

        @seed(1)
        @settings(max_examples=args.n, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(prop.inputs(policies))
        def collect(params: dict[str, Any]) -> None:
            drawn.append(copy.deepcopy(params))  # noqa: B023 - run at once, within this iteration

        collect()
        inputs.extend((prop.op, params) for params in drawn)
    target = ReferenceTarget()

    from ctxmodel.tokens import counter

    def call(op: str, params: dict[str, Any], mutant: str) -> str:
        counter._INSTANCES.clear()  # counts are cached per text: each call counts afresh, the mutant's own way
        os.environ["MUTANT_UNDER_TEST"] = mutant
        try:
            return _ID.sub("ID", json.dumps(target.call(op, copy.deepcopy(params)), sort_keys=True, default=str))
        except Exception as exc:  # a mutant may crash the reference: that is a difference too
            return f"exception {type(exc).__name__}: {exc}"
        finally:
            os.environ["MUTANT_UNDER_TEST"] = ""

    base = [call(op, p, "") for op, p in inputs]
    noisy = sum(a != call(op, p, "") for a, (op, p) in zip(base, inputs, strict=True))
    print(f"{len(inputs)} inputs of {', '.join(sorted(ops))}; {noisy} differ between two unmutated runs")
    for mutant in args.mutants:
        differ = [i for i, (op, p) in enumerate(inputs) if call(op, p, mutant) != base[i]]
        print(f"{mutant}: differs on {len(differ)}/{len(inputs)}" + (f" (inputs {differ[:5]})" if differ else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
