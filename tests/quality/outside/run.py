"""Run the gate against every outside variant, one at a time, and print what it caught.

For each variant of ``variants/`` as ``tests.quality.variants`` declares them (``bug_*``: one injected
mistake each; ``legit_*``: contract-allowed choices the gate must pass; ``_*`` modules are helpers),
this runs

    python -m ctxmodel check --target python:tests.quality.outside.variants.NAME --profile ci --seed S \\
        --fixtures TMPDIR

with the working directory set to ``--repo`` (so ``python -m ctxmodel`` imports that checkout's code
first). For another checkout than this one, which has no ``tests/quality``, this folder goes on its
``PYTHONPATH`` and the target is ``python:variants.<name>`` (the variants import their kit
relatively, so both names work). Every variant gets a fresh fixtures directory and a fresh Hypothesis
database (``HYPOTHESIS_STORAGE_DIRECTORY``), so no failing example found for one variant is replayed
for another; the checkout's promoted ``regressions/`` run as the gate runs them.

    python -m tests.quality.outside.run --seed 0
    python -m tests.quality.outside.run --repo /tmp/ctxbase --seed 0
    python -m tests.quality.outside.run --only bug_vis --only legit_control

Exit status 0 when every bug was detected and no legit variant was flagged, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.quality.variants import collect, expected_of

HERE = Path(__file__).resolve().parent
PACKAGE = "tests.quality.outside.variants"
DEFAULT_REPO = HERE.parents[2]

#: A row of the gate's summary table: property, examples, then (newer gates) "found at" and
#: shrinks, then the result.
ROW = re.compile(
    r"^(?P<prop>[a-z][\w.-]*\.[\w.-]+)\s+(?P<n>\d+)(?:\s+(?:-|\d+)\s+\d+)?\s+(?P<result>[A-Za-z]\S*.*?)\s*$"
)


def variants(only: list[str]) -> list[str]:
    names = [v.name for v in collect(PACKAGE)]
    if only:
        names = [n for n in names if any(o in n for o in only)]
    return names


def failing(stdout: str, fixtures: Path) -> list[str]:
    """Properties the gate did not pass: its summary rows, plus any property a fixture names."""
    found: list[str] = []
    for line in stdout.splitlines():
        m = ROW.match(line.strip())
        if m and m.group("result").lower() != "passed" and not m.group("result").startswith("skipped"):
            result = m.group("result").lower()
            found.append(m.group("prop") if result == "failed" else f"{m.group('prop')} ({result})")
    for path in sorted(fixtures.glob("**/*.json")):
        try:
            prop = json.loads(path.read_text()).get("property")
        except (OSError, ValueError):
            continue
        if isinstance(prop, str) and not any(f.split(" ")[0] == prop for f in found):
            found.append(f"{prop} (fixture)")
    return found


def run_one(name: str, args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"outside-{name}-") as tmp:
        fixtures = Path(tmp) / "fixtures"
        env = dict(os.environ)
        if args.repo == DEFAULT_REPO:
            spec = f"python:{PACKAGE}.{name}"
            path = [str(args.repo)]
        else:  # another checkout's gate: the variants come from this folder
            spec = f"python:variants.{name}"
            path = [str(HERE), str(args.repo)]
        env["PYTHONPATH"] = os.pathsep.join([*path, *filter(None, [env.get("PYTHONPATH")])])
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(Path(tmp) / "hypothesis")
        cmd = [
            args.python, "-m", "ctxmodel", "check",
            "--target", spec,
            "--profile", args.profile,
            "--seed", str(args.seed),
            "--fixtures", str(fixtures),
        ]  # fmt: skip
        start = time.monotonic()
        try:
            proc = subprocess.run(
                cmd, cwd=args.repo, env=env, capture_output=True, text=True, timeout=args.timeout, check=False
            )
            rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc = -1
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = "timeout"
        seconds = time.monotonic() - start
        props = failing(stdout, fixtures)
        if args.keep:
            keep = Path(args.keep) / f"seed{args.seed}" / name
            shutil.rmtree(keep, ignore_errors=True)
            keep.mkdir(parents=True)
            (keep / "stdout.txt").write_text(stdout)
            (keep / "stderr.txt").write_text(stderr)
            if fixtures.exists():
                shutil.copytree(fixtures, keep / "fixtures")
    expected = expected_of(name)
    return {
        "variant": name,
        "expected": expected,
        "exit": rc,
        "failing": props,
        "detected": rc != 0,
        "seconds": round(seconds, 1),
        "seed": args.seed,
        "note": "" if rc in (0, 1) else (stderr.strip().splitlines() or [""])[-1][:200],
    }


def table(rows: list[dict[str, object]]) -> str:
    out = [
        "| variant | expected | exit | failing properties | detected | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        props = ", ".join(r["failing"]) or "—"  # type: ignore[arg-type]
        if r["note"]:
            props += f" ({r['note']})"
        if r["expected"] == "bug":
            verdict = "yes" if r["detected"] else "**no (missed)**"
        else:
            verdict = "**yes (false positive)**" if r["detected"] else "no (passed)"
        out.append(f"| {r['variant']} | {r['expected']} | {r['exit']} | {props} | {verdict} | {r['seconds']} |")
    bugs = [r for r in rows if r["expected"] == "bug"]
    legit = [r for r in rows if r["expected"] == "legit"]
    out.append("")
    out.append(
        f"bugs detected: {sum(bool(r['detected']) for r in bugs)}/{len(bugs)}; "
        f"legit flagged: {sum(bool(r['detected']) for r in legit)}/{len(legit)}"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", default=[], help="substring of variant names (repeatable)")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="checkout whose ctxmodel runs the gate")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the gate's dependencies")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per variant")
    parser.add_argument("--keep", help="directory to keep each variant's output and fixtures in")
    parser.add_argument("--json", help="append one JSON line per variant to this file")
    args = parser.parse_args(argv)
    args.repo = args.repo.resolve()
    names = variants(args.only)
    if not names:
        parser.error(f"no variant matches {args.only}")
    rows = []
    for name in names:
        row = run_one(name, args)
        rows.append(row)
        print(f"{name}: exit {row['exit']} in {row['seconds']} s: {', '.join(row['failing']) or 'all passed'}",  # type: ignore[arg-type]
              file=sys.stderr, flush=True)  # fmt: skip
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    print(table(rows))
    ok = all(r["detected"] == (r["expected"] == "bug") for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
