"""Gate every installed library configuration, and say what each run found: the table of
``docs/gating-python-libraries.md``, measured.

    python examples/targets/gate_all.py [LIBRARY[:CONFIG] ...] [--rebaseline] [--seed N ...] [--json OUT]

For each configuration of each library whose environment is installed (``install.py LIBRARY``),
one ``ctxmodel check --profile ci --seed N`` per seed with the library's committed baseline
(``baseline/<config>/``): the run fails only on kinds that are new. With ``--rebaseline`` the
baseline is made again instead: the folder is emptied and every seed's shrunk fixtures are written
into it (a kind one seed meets and another does not is known either way), with a ``SEEDS`` file
naming the seeds, so that a configuration with no known failure still has its (empty) baseline.
Commit them with the library's pins when a new version is adopted. The runs go one at a time, each
in its own example database, so that their times are each one run's. Exits 1 when any run did
(a new kind, or a configuration with no baseline), 2 when nothing was selected.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from libraries import HERE, ROOT, selected


def fixtures(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        messages = data.get("params", {}).get("messages")
        found.append({"kind": data.get("kind") or data.get("property"), "messages": len(messages)
                      if isinstance(messages, list) else None,
                      "fixture": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)})
    return found


def gate(library: str, config: str, argv: list[str], *, seed: int, rebaseline: bool,
         fresh: bool = True) -> dict[str, Any]:
    """One run; under ``rebaseline`` its fixtures go into the baseline (emptied first when ``fresh``)."""
    baseline = HERE / library / "baseline" / config
    if not rebaseline and not (baseline / "SEEDS").is_file():
        return {"library": library, "configuration": config, "target": "", "exit": 1, "seconds": 0.0,
                "summary": f"no baseline committed ({baseline.relative_to(ROOT)}/SEEDS missing: run --rebaseline)",
                "kinds": []}
    with tempfile.TemporaryDirectory() as scratch:
        command = [sys.executable, "-m", "ctxmodel", "check", "--target", "exec:" + " ".join(argv),
                   "--profile", "ci", "--seed", str(seed), "--timeout", "30"]
        if rebaseline:
            if fresh:
                shutil.rmtree(baseline, ignore_errors=True)
            command += ["--fixtures", str(baseline)]
        else:
            command += ["--fixtures", os.path.join(scratch, "fx")]
            if baseline.is_dir():
                command += ["--baseline", str(baseline)]
        env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(scratch, "hypothesis"))
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        lines = done.stdout.splitlines()
        head = lines[0] if lines else done.stderr.strip()
        total = next((line for line in reversed(lines) if line[:1].isdigit()), done.stderr.strip()[-200:])
        found = fixtures(baseline if rebaseline else Path(scratch) / "fx")
    return {"library": library, "configuration": config, "target": head, "exit": done.returncode,
            "seconds": round(seconds, 1), "summary": total, "kinds": found}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("selected", nargs="*", help="LIBRARY or LIBRARY:CONFIG (default: every installed one)")
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="one run per seed (default: 0)")
    parser.add_argument("--rebaseline", action="store_true", help="make each configuration's baseline again")
    parser.add_argument("--json", help="append one JSON line per configuration to this file")
    args = parser.parse_args()
    runs, missing = selected(args.selected)
    for name in missing:
        print(f"{name}: not installed (python examples/targets/install.py {name})", file=sys.stderr)
    if not runs:
        print("no installed library configuration selected", file=sys.stderr)
        return 2
    failed = 0
    for library, config, argv in runs:
        for k, seed in enumerate(args.seed):
            row = gate(library, config, argv, seed=seed, rebaseline=args.rebaseline, fresh=k == 0)
            row["seed"] = seed
            kinds = ", ".join(f"{k['kind']} ({k['messages']})" for k in row["kinds"]) or "none"
            print(f"{library} {config} seed {seed}: exit {row['exit']} in {row['seconds']:.0f} s; {row['summary']}; "
                  f"kinds: {kinds}", flush=True)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as out:
                    out.write(json.dumps(row) + "\n")
            failed += row["exit"] != 0 and not args.rebaseline
        if args.rebaseline:
            folder = HERE / library / "baseline" / config
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "SEEDS").write_text(" ".join(map(str, args.seed)) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
