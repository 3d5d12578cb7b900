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

``--floor`` tells a library's own cost apart from ctxmodel's: the library's run records every
request it was sent, and a fresh process of the library answers them again, alone, once with the
handshake only (its start: imports) and once with all of them. The floor is the ratio the gate
would have if ctxmodel spent nothing on the library beyond what it spends on the reference:
(reference + the library's own seconds) / reference. A floor above 1.5 is a goal no adapter that
runs the library's code as it is can meet.

    .venv/bin/python benchmarks/bench_libraries.py [LIBRARY[:CONFIG] ...] [--target SPEC ...] [--seed N]
        [--no-baseline] [--floor]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
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


def answering_seconds(argv: list[str], requests: Path, lines: int | None = None) -> float:
    """A fresh process of the target answering the recorded requests (the first ``lines`` of them)."""
    recorded = requests.read_text().splitlines(keepends=True)
    given = "".join(recorded[:lines] if lines is not None else recorded)
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, input=given, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("selected", nargs="*", help="LIBRARY or LIBRARY:CONFIG (default: every installed one)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-baseline", action="store_true", help="the first run's cost: no baseline")
    parser.add_argument("--target", action="append", default=[], metavar="SPEC",
                        help="any other target, measured the same way (no baseline)")
    parser.add_argument("--floor", action="store_true",
                        help="also the library's own seconds for the requests it was sent, and the floor ratio")
    args = parser.parse_args()
    rows = []
    runs, missing = selected(args.selected) if args.selected or not args.target else ([], [])
    for name in missing if args.selected else ():
        print(f"{name}: not installed (python examples/targets/install.py {name})")
    specs: list[tuple[str, str, str, list[str] | None]] = [
        (library, config, "exec:" + " ".join(argv), argv) for library, config, argv in runs]
    specs += [(spec.rpartition(":")[2] or spec, "-", spec, None) for spec in args.target]
    floors = []
    for library, config, spec, argv in specs:
        ops, policies, dialect = declared(spec)
        common = ["--seed", str(args.seed), "--ops", ",".join(ops)]
        reference_spec = "reference" if dialect == "anthropic" else f"reference:{dialect}"
        reference = check_seconds(reference_spec, [*common, *(f"--policy={p}" for p in policies)])
        baseline = TARGETS / library / "baseline" / config
        extra = [] if args.no_baseline or not baseline.is_dir() else ["--baseline", str(baseline)]
        floor = args.floor and argv is not None
        recording = Path(tempfile.mkdtemp()) / "requests.jsonl" if floor else None
        if recording is not None and argv is not None:
            spec = "exec:sh -c " + shlex.quote(f"tee {shlex.quote(str(recording))} | {shlex.join(argv)}")
        gated = check_seconds(spec, [*common, *extra])
        ratio = gated[0] / reference[0]
        if recording is not None and argv is not None:
            start, answering = answering_seconds(argv, recording, 1), answering_seconds(argv, recording)
            requests = len(recording.read_text().splitlines())
            floors.append((library, config, reference[0], start, answering, requests))
            print(f"    {library} alone: start {start:.1f} s, {requests} requests answered in {answering:.1f} s "
                  f"(start included), floor {(reference[0] + answering) / reference[0]:.2f}", flush=True)
            shutil.rmtree(recording.parent)
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
    if floors:
        print("\n| library | configuration | reference | library alone: start | all requests (start included) "
              "| floor |\n|---|---|---|---|---|---|")
        for library, config, seconds, start, answering, requests in floors:
            print(f"| {library} | {config} | {seconds:.1f} s | {start:.1f} s | {answering:.1f} s ({requests}) "
                  f"| {(seconds + answering) / seconds:.2f} |")


if __name__ == "__main__":
    main()
