"""Mutation testing of the reference with mutmut 3, and the kill matrix: which property kills which mutant.

    python -m tests.quality.mutation.run                 # a seeded sample of 100 mutants (about 20 min on 2 cores)
    python -m tests.quality.mutation.run --all           # every mutant of the three modules (hours)
    python -m tests.quality.mutation.run --sample 12 --no-matrix   # a smoke run
    python -m tests.quality.mutation.run --properties-only --no-matrix --mutants NAME...   # named mutants only
    python -m tests.quality.mutation.run --sample 200 --properties-only --no-matrix   # the properties alone (20 min)

Steps, in a scratch directory (``--workdir``) so the project's pyproject.toml and tests/ stay out of it:

1. copy ``ctxmodel/``, ``properties/``, ``strategies/``, ``setup.cfg`` (mutmut's configuration:
   mutate ``normalize.py``, ``visibility.py``, ``recover.py``, ``tokens/counter.py``) and ``kill.py`` as
   ``tests/test_kill.py`` (one test per property, the in-process reference target, the ``mutation``
   Hypothesis profile);
2. ``mutmut run`` once to generate the mutants and the per-test coverage stats, then ``mutmut run
   NAMES`` on the sample: mutmut's own clean run, forced-fail sanity run and per-mutant verdicts;
3. the kill matrix: every killed mutant is re-run (``matrix_worker.py``) against every property that
   covers its function, without stopping at the first failure; a survivor's row is empty by
   definition (mutmut ran every covering property and all passed);
4. print the score, the properties ranked by kills (a property that kills nothing stands out) and
   every survivor with its diff and the reason recorded in ``survivors.json`` (equivalent, or the
   missing property), and write everything to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
MODULES = ("normalize", "visibility", "recover", "tokens/counter")
GENERATE_ONLY = "ctxmodel.__generate_only__"
PREFIX = "tests/test_kill.py::test_property["
#: The reference's own unit tests of the mutated modules (tests/unit/), run by mutmut next to the properties:
#: they pin the reference's documented choices (marker text, notice, report fields) that the contract
#: leaves to each target and so no property may require (contract §4 "Reference").
UNIT_TESTS = ("test_normalize.py", "test_recover.py", "test_visibility.py", "test_tokens.py")
SELF = "self:"


def _mutmut() -> list[str]:
    exe = Path(sys.executable).with_name("mutmut")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mutmut"]


def prepare(workdir: Path, unit_tests: bool = True) -> None:
    if workdir.exists():
        shutil.rmtree(workdir)
    (workdir / "tests").mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("ctxmodel", "properties", "strategies"):
        shutil.copytree(ROOT / name, workdir / name, ignore=ignore)
    shutil.copy2(HERE / "setup.cfg", workdir / "setup.cfg")
    # Named so that the project's own pytest run never collects them; in the scratch directory they are
    # the test entry and its conftest.
    shutil.copy2(HERE / "kill.py", workdir / "tests" / "test_kill.py")
    shutil.copy2(HERE / "scratch_conftest.py", workdir / "tests" / "conftest.py")
    for name in UNIT_TESTS if unit_tests else ():
        shutil.copy2(ROOT / "tests" / "unit" / name, workdir / "tests" / name)


def mutmut(workdir: Path, args: list[str], env: dict[str, str], log: Path) -> int:
    with log.open("ab") as out:
        return subprocess.call([*_mutmut(), *args], cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)


def read_meta(workdir: Path) -> dict[str, int | None]:
    """Mutant name -> mutmut's exit code (None: not run), from mutmut's ``.meta`` files."""
    out: dict[str, int | None] = {}
    for module in MODULES:
        meta = workdir / "mutants" / "ctxmodel" / f"{module}.py.meta"
        if meta.exists():
            out.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    return out


def status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code

    return str(status_by_exit_code[code])


def covering(workdir: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Mangled function name -> property ids whose test reached it, and -> unit tests reaching it
    (mutmut's stats run)."""
    stats = json.loads((workdir / "mutants" / "mutmut-stats.json").read_text(encoding="utf-8"))
    props: dict[str, list[str]] = {}
    units: dict[str, list[str]] = {}
    for function, tests in stats["tests_by_mangled_function_name"].items():
        props[function] = sorted(t[len(PREFIX) : -1] for t in tests if t.startswith(PREFIX))
        units[function] = sorted(t for t in tests if not t.startswith(PREFIX))
    return props, units


def module_of(mutant: str) -> str:
    """``ctxmodel.tokens.counter.x_f__mutmut_3`` -> ``tokens/counter``."""
    dotted = mutant.rsplit(".", 1)[0].removeprefix("ctxmodel.")
    return dotted.replace(".", "/")


def stratified(names: list[str], size: int, seed: int) -> list[str]:
    """``size`` mutants, an equal share from each module (a module with fewer gives all it has and
    the rest goes to the others), so a large module does not decide the score alone."""
    rng = random.Random(seed)
    pools = {m: [n for n in names if module_of(n) == m] for m in MODULES}
    chosen: list[str] = []
    left = size
    for i, m in enumerate(sorted(pools, key=lambda m: len(pools[m]))):
        share = left // (len(pools) - i)
        take = rng.sample(pools[m], min(share, len(pools[m])))
        chosen += take
        left -= len(take)
    return sorted(chosen)


def function_of(mutant: str) -> str:
    return mutant.rsplit("__mutmut_", 1)[0]


def diff(workdir: Path, mutant: str) -> str:
    shown = subprocess.run([*_mutmut(), "show", mutant], cwd=workdir, capture_output=True, text=True, check=False)
    lines = [ln for ln in shown.stdout.splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))]
    return " | ".join(ln.strip() for ln in lines)[:240]


def kill_matrix(
    workdir: Path, jobs: list[dict[str, Any]], workers: int, timeout: float, env: dict[str, str]
) -> list[dict[str, Any]]:
    mutants_dir = workdir / "mutants"
    shutil.copy2(HERE / "matrix_worker.py", mutants_dir / "matrix_worker.py")
    shards = [jobs[i::workers] for i in range(workers)]
    procs = []
    outs = []
    for i, shard in enumerate(shards):
        if not shard:
            continue
        jobs_file = mutants_dir / f"matrix-jobs-{i}.jsonl"
        out_file = mutants_dir / f"matrix-out-{i}.jsonl"
        jobs_file.write_text("".join(json.dumps(j) + "\n" for j in shard), encoding="utf-8")
        out_file.write_text("", encoding="utf-8")
        procs.append(
            subprocess.Popen(
                [sys.executable, "matrix_worker.py", str(jobs_file), str(out_file), str(timeout)],
                cwd=mutants_dir,
                env=env,
            )
        )
        outs.append(out_file)
    for proc in procs:
        proc.wait()
    rows: list[dict[str, Any]] = []
    for out_file in outs:
        rows.extend(json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines() if line.strip())
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ctxmodel-mutation"))
    parser.add_argument("--sample", type=int, default=100,
                        help="mutants drawn (seeded), an equal share from each module")
    parser.add_argument("--properties-only", action="store_true",
                        help="the properties alone decide a kill (the reference's unit tests are left out)")
    parser.add_argument("--all", action="store_true", help="every mutant")
    parser.add_argument("--mutants", nargs="+", default=None, metavar="NAME",
                        help="these mutants only (as mutmut names them): re-judge survivors after a change")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--examples", type=int, default=25, help="examples per property and mutant")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant in the kill matrix")
    parser.add_argument("--no-matrix", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    started = time.monotonic()
    workdir = Path(args.workdir).resolve()
    prepare(workdir, unit_tests=not args.properties_only)
    log = workdir / "mutmut.log"
    env = dict(os.environ)
    env.update(
        CTXMODEL_MUTATION_EXAMPLES=str(args.examples),
        HYPOTHESIS_STORAGE_DIRECTORY=str(workdir / ".hypothesis"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("MUTANT_UNDER_TEST", None)
    # 1. Generate the mutants and collect coverage stats; the name filter matches nothing on purpose.
    mutmut(workdir, ["run", "--max-children", str(args.jobs), GENERATE_ONLY], env, log)
    everything = read_meta(workdir)
    if not everything or not (workdir / "mutants" / "mutmut-stats.json").exists():
        print(f"mutation: mutmut generated no mutants or no stats; see {log}", file=sys.stderr)
        return 2
    names = sorted(everything)
    if args.mutants:
        unknown = sorted(set(args.mutants) - set(names))
        if unknown:
            print(f"mutation: no such mutant: {', '.join(unknown)}", file=sys.stderr)
            return 2
        chosen = sorted(set(args.mutants))
    else:
        chosen = names if args.all else stratified(names, min(args.sample, len(names)), args.seed)
    per_module = Counter(module_of(n) for n in chosen)
    print(f"mutation: {len(names)} mutants in {', '.join(MODULES)}; running {len(chosen)} "
          f"({', '.join(f'{m} {per_module[m]}' for m in MODULES)})", flush=True)
    # 2. mutmut's verdicts on the sample.
    code = mutmut(workdir, ["run", "--max-children", str(args.jobs), *chosen], env, log)
    verdicts = {name: status(read_meta(workdir).get(name)) for name in chosen}
    if code != 0 and all(v == "not checked" for v in verdicts.values()):
        print(f"mutation: mutmut run failed (exit {code}); see {log}", file=sys.stderr)
        return 2
    cover, unit_cover = covering(workdir)
    # 3. The kill matrix.
    killed = [n for n in chosen if verdicts[n] in ("killed", "timeout", "segfault")]
    matrix: dict[str, dict[str, Any]] = {}
    if not args.no_matrix and killed:
        jobs = [{"mutant": n, "props": cover.get(function_of(n), [])} for n in killed]
        for row in kill_matrix(workdir, jobs, args.jobs, args.timeout, env):
            matrix[row["mutant"]] = row
    # 4. Report.
    reasons: dict[str, dict[str, str]] = json.loads((HERE / "survivors.json").read_text(encoding="utf-8"))
    counts = Counter(verdicts.values())
    survivors = [n for n in chosen if verdicts[n] in ("survived", "no tests", "suspicious")]
    equivalent = [n for n in survivors if reasons.get(n, {}).get("kind") == "equivalent"]
    non_equivalent = len(chosen) - len(equivalent)
    score = len(killed) / non_equivalent if non_equivalent else 1.0
    # Kills by a property (the kill matrix re-ran each killed mutant against its covering properties)
    # versus kills by the reference's unit tests alone (its own documented choices: marker text,
    # notice, report fields, which the contract leaves to each target).
    by_property = [n for n in killed if matrix.get(n, {}).get("killed_by")]
    unit_only = [n for n in killed if n in matrix and not matrix[n]["killed_by"] and not matrix[n]["timeout"]]
    property_score = len(by_property) / non_equivalent if non_equivalent else 1.0
    kills: Counter[str] = Counter()
    covers: Counter[str] = Counter()
    for n in killed:
        entry = matrix.get(n)
        for prop in entry["killed_by"] if entry else []:
            kills[prop] += 1
    for n in chosen:
        for prop in cover.get(function_of(n), []):
            covers[prop] += 1
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if matrix:
        print("\nkill matrix (property: mutants killed / mutants whose function it covers):")
        for prop in sorted(covers, key=lambda p: (-kills[p], p)):
            flag = "   <- kills nothing" if kills[prop] == 0 else ""
            print(f"  {prop:<44} {kills[prop]:>4} / {covers[prop]:<4}{flag}")
        only = Counter(matrix[n]["killed_by"][0] for n in killed if n in matrix and len(matrix[n]["killed_by"]) == 1)
        if only:
            print("  sole killer of: " + ", ".join(f"{p} {c}" for p, c in only.most_common()))
        if unit_only:
            print(f"  killed by the reference's unit tests alone ({len(unit_only)}): {', '.join(unit_only)}")
    print(f"\nsurvivors ({len(survivors)}):")
    by_kind: dict[str, int] = defaultdict(int)
    unreached = {"kind": "not reached", "why": "no property calls this function"
                 + (" (the reference's unit tests were left out)" if args.properties_only else " and no unit test")}
    for n in survivors:
        default = unreached if verdicts[n] == "no tests" else {"kind": "unexplained", "why": "not in survivors.json"}
        reason = reasons.get(n, default)
        by_kind[reason["kind"]] += 1
        print(f"  {n} [{verdicts[n]}] {reason['kind']}: {reason['why']}")
        print(f"      {diff(workdir, n)}")
    # The measure: a mutant the contract allows (it changes only the reference's own report,
    # wording or choices) is no kill to chase, so it leaves the denominator with the equivalent ones.
    allowed = [n for n in survivors if reasons.get(n, {}).get("kind") in ("report-only", "contract-equivalent")]
    judged = non_equivalent - len(allowed)
    print(
        f"\nkilled among the mutants the contract does not allow: {len(killed)}/{judged} = "
        f"{100 * len(killed) / max(judged, 1):.1f}% (less {len(equivalent)} equivalent and {len(allowed)} "
        "report-only or contract-equivalent)"
    )
    print(
        f"\nmutation score: {len(killed)}/{non_equivalent} non-equivalent mutants killed = {100 * score:.1f}%"
        + (
            f"; by a property: {len(by_property)}/{non_equivalent} = {100 * property_score:.1f}%, "
            f"by the unit tests alone: {len(unit_only)} "
            if matrix
            else " "
        )
        + f"(sample {len(chosen)} of {len(names)}, seed {args.seed}, {args.examples} examples per property; "
        f"{len(equivalent)} equivalent; survivors by reason: {dict(by_kind) or 'none'}; "
        f"{time.monotonic() - started:.0f} s)"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "total_mutants": len(names),
                    "sample": chosen,
                    "verdicts": verdicts,
                    "matrix": matrix,
                    "covering": {n: cover.get(function_of(n), []) for n in chosen},
                    "score": score,
                    "property_score": property_score if matrix else None,
                    "unit_only": unit_only,
                    "unit_covering": {n: unit_cover.get(function_of(n), []) for n in chosen},
                    "killed": len(killed),
                    "non_equivalent": non_equivalent,
                    "survivors": {n: reasons.get(n) for n in survivors},
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
