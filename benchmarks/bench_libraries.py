"""What gating a field library costs against gating the reference, measured in one run.

For each library configuration (``examples/targets/<library>/``, its environment installed with
``python examples/targets/install.py LIBRARY``), two ``ctxmodel check --profile ci`` processes at the
same seed, alternated, each with its own empty example database and fixtures directory:

- the reference in the library's dialect (``reference:openai-chat``), restricted to the ops the
  library offers and given the library's declared policies with ``--policy``, so that both runs
  draw from the same input space and run the same properties;
- the library, with its committed baseline (``baseline/<config>/``) when it has one, as a
  maintainer who adopted the gate runs it in CI: a known kind is replayed from its fixture, not
  searched for and shrunk again. Without ``--baseline``-able fixtures it is the first run's cost.

The ratio is the library's wall time over the reference's. Goal: at most 1.5 (the install of the
library's environment aside: it happens once, before). ``--target SPEC`` (repeatable) measures any
other target the same way: a trimmer of one's own, or the legitimate trimmers of the tests
(``python:tests.targets.trimmers:SuffixCutChat``), without a baseline.

    .venv/bin/python benchmarks/bench_libraries.py [LIBRARY[:CONFIG] ...] [--target SPEC ...] [--seed N]
        [--no-baseline]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "examples" / "targets"
sys.path.insert(0, str(TARGETS))

from libraries import selected  # noqa: E402  (examples/targets is no package)


def declared(spec: str) -> tuple[list[str], list[str], str]:
    """The ops, the ``--policy`` overrides and the dialect a target's describe declares."""
    sys.path.insert(0, str(ROOT))
    from ctxmodel.targets.spec import open_target

    target = open_target(spec)
    try:
        description = target.description
        ops = sorted(description.ops & {"trim", "count", "normalize", "repair", "effective", "request", "recover"})
        policies = [f"{k}={v}" for k, v in sorted(description.policies.items()) if k != "dialect"]
        return ops, policies, description.dialect
    finally:
        target.close()


def check_seconds(target: str, extra: list[str]) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(scratch, "hypothesis"))
        argv = [sys.executable, "-m", "ctxmodel", "check", "--target", target, "--profile", "ci",
                "--fixtures", os.path.join(scratch, "fx"), *extra]
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    totals = [line for line in done.stdout.splitlines() if line[:1].isdigit()]
    return seconds, done.returncode, totals[-1] if totals else done.stderr.strip()[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("selected", nargs="*", help="LIBRARY or LIBRARY:CONFIG (default: every installed one)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-baseline", action="store_true", help="the first run's cost: no baseline")
    parser.add_argument("--target", action="append", default=[], metavar="SPEC",
                        help="any other target, measured the same way (no baseline)")
    args = parser.parse_args()
    rows = []
    runs, missing = selected(args.selected) if args.selected or not args.target else ([], [])
    for name in missing if args.selected else ():
        print(f"{name}: not installed (python examples/targets/install.py {name})")
    specs = [(library, config, "exec:" + " ".join(argv)) for library, config, argv in runs]
    specs += [(spec.rpartition(":")[2] or spec, "-", spec) for spec in args.target]
    for library, config, spec in specs:
        ops, policies, dialect = declared(spec)
        common = ["--seed", str(args.seed), "--ops", ",".join(ops)]
        reference_spec = "reference" if dialect == "anthropic" else f"reference:{dialect}"
        reference = check_seconds(reference_spec, [*common, *(f"--policy={p}" for p in policies)])
        baseline = TARGETS / library / "baseline" / config
        extra = [] if args.no_baseline or not baseline.is_dir() else ["--baseline", str(baseline)]
        gated = check_seconds(spec, [*common, *extra])
        ratio = gated[0] / reference[0]
        rows.append((library, config, reference, gated, ratio, bool(extra)))
        print(f"{library} {config}: reference {reference[0]:.1f} s (exit {reference[1]}), "
              f"library {gated[0]:.1f} s (exit {gated[1]}{', baseline' if extra else ''}), ratio {ratio:.2f}",
              flush=True)
        print(f"    reference: {reference[2]}\n    library:   {gated[2]}", flush=True)
    if rows:
        print("\n| library | configuration | reference | library | ratio |\n|---|---|---|---|---|")
        for library, config, reference, gated, ratio, with_baseline in rows:
            note = " (baseline)" if with_baseline else ""
            print(f"| {library} | {config} | {reference[0]:.1f} s | {gated[0]:.1f} s{note} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
