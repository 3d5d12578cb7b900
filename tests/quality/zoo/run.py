"""Run the gate against every zoo variant and print what it caught (the harness is worth the bugs it finds).

Each variant is a ``python:tests.quality.zoo.NAME`` target, checked like ``ctxmodel check --profile ci``
does it (``ctxmodel.gate.run_property``, the same seed, the same settings) except that the example
database is off, so a figure never depends on an earlier run. Per variant the table shows whether a
property failed, which one (and how many others), how many examples the first failing property drew
until its first failure, the seconds the variant took, and the size of the shrunk counterexample the
gate wrote as a fixture.

    python -m tests.quality.zoo.run            # every variant; a bug variant stops at its first failing property
    python -m tests.quality.zoo.run --all-properties   # every property on every variant (which properties catch what)
    python -m tests.quality.zoo.run --quick    # a few variants
    python -m tests.quality.zoo.run --only bug_global_id_set legit_relabel
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import attrs
from hypothesis import Phase

from tests.quality.variants import Variant, collect

ROOT = Path(__file__).resolve().parents[3]


__all__ = ["QUICK", "Row", "format_table", "main", "run_variant", "summary", "variants"]

#: ``--quick``: one bug per family, two legitimate variants and the reference.
QUICK = (
    "bug_global_id_set",
    "bug_vis_ignores_condense",
    "bug_zero_progress_success",
    "bug_count_per_message_rounding",
    "legit_independent",
    "legit_orphans_any",
    "reference",
)


@attrs.frozen
class Row:
    variant: str
    kind: str  # "bug", "legit" or "reference"
    description: str
    clause: str
    detected: bool
    caught_by: tuple[str, ...]
    errors: tuple[str, ...]
    examples: int | None  # examples the first failing property drew until its first failure
    seconds: float
    shrunk_messages: int | None
    shrunk_blocks: int | None
    properties_run: int

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


PACKAGE = "tests.quality.zoo"


def declared() -> dict[str, Variant]:
    """Every zoo variant as declared (``tests.quality.variants``), by name."""
    return {v.name: v for v in collect(PACKAGE)}


def variants() -> list[str]:
    """Every zoo module (``bug_*``, ``legit_*``), then ``reference``."""
    return [*declared(), "reference"]


def _size(params: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """(messages, blocks) of a shrunk input; string content is one block, ``""`` none."""
    if not params or not isinstance(params.get("messages"), list):
        return None, None
    messages = params["messages"]
    blocks = 0
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        blocks += len(content) if isinstance(content, list) else int(bool(content))
    return len(messages), blocks


def run_variant(
    name: str,
    *,
    profile: str = "ci",
    max_examples: int | None = None,
    first_only: bool = False,
    property_ids: Sequence[str] = (),
    fixtures_dir: str | None = None,
    seed: int = 0,
    shrink: bool = True,
) -> Row:
    """Check one variant with the gate's own runner; ``first_only`` stops at the first failing property.

    ``shrink=False`` leaves Hypothesis's shrink phase out: whether and when a bug is met, at a
    fraction of the cost (what a many-seed detection test needs; the fixture is then unshrunk)."""
    os.chdir(ROOT)  # python: targets import from the working directory, as ``ctxmodel check`` does
    from ctxmodel import gate
    from ctxmodel.policies import resolve
    from ctxmodel.profiles import get_profile
    from ctxmodel.properties.registry import select
    from ctxmodel.runs import RunConfig
    from ctxmodel.targets.spec import open_target

    if name == "reference":
        spec, kind, description, clause = "reference", "reference", "ctxmodel's own implementation", "contract"
    else:
        variant = declared()[name]
        spec, kind, description, clause = variant.spec, variant.expected, variant.description, variant.clause
    started = time.monotonic()
    target = open_target(spec)
    policies = resolve(target.description.policies)
    chosen = get_profile(profile)
    if not shrink:
        chosen = attrs.evolve(chosen, phases=tuple(p for p in chosen.phases if p is not Phase.shrink))
    caught: list[str] = []
    errors: list[str] = []
    examples: int | None = None
    size: tuple[int | None, int | None] = (None, None)
    ran = 0
    with tempfile.TemporaryDirectory() as scratch:
        for prop in _ordered(select(property_ids), clause):
            outcome = gate.run_property(
                prop,
                target,
                RunConfig(profile=chosen, policies=policies, fixtures_dir=fixtures_dir or scratch, seed=seed,
                          max_examples=max_examples, database=None),
            )
            if outcome.status == "skipped":
                continue
            ran += 1
            if outcome.status == "error":
                errors.append(f"{prop.id}: {outcome.reason}")
            elif outcome.status == "failed":
                if not caught:
                    first = min(outcome.kinds, key=lambda k: k.first_example)
                    examples = first.first_example
                    size = _size(first.params)
                caught.append(prop.id)
                if first_only:
                    break
    target.close()
    return Row(
        variant=name,
        kind=kind,
        description=description,
        clause=clause,
        detected=bool(caught),
        caught_by=tuple(caught),
        errors=tuple(errors),
        examples=examples,
        seconds=round(time.monotonic() - started, 1),
        shrunk_messages=size[0],
        shrunk_blocks=size[1],
        properties_run=ran,
    )


def _ordered(props: Sequence[Any], clause: str) -> list[Any]:
    """The properties citing the variant's clause first: only a matter of time, every property still runs
    (unless ``first_only``), and the table names whichever failed first."""
    section = clause.removeprefix("contract ").strip()
    if not section.startswith("§"):
        return list(props)

    def cites(prop: Any) -> bool:
        return any(part.strip().startswith(section) for part in prop.clause.replace("contract", "").split(","))

    return [p for p in props if cites(p)] + [p for p in props if not cites(p)]


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def format_table(rows: Sequence[Row]) -> str:
    head = ("variant", "detected", "caught by", "examples", "seconds", "shrunk (msgs, blocks)")
    lines: list[tuple[str, ...]] = [head]
    for r in rows:
        if r.kind == "bug":
            detected = "yes" if r.detected else "NO"
        else:
            detected = "FLAGGED" if r.detected else "no (passes)"
        by = r.caught_by[0] if r.caught_by else "-"
        if len(r.caught_by) > 1:
            by += f" (+{len(r.caught_by) - 1})"
        shrunk = "-" if r.shrunk_messages is None else f"{r.shrunk_messages}, {r.shrunk_blocks}"
        lines.append((r.variant, detected, by, _cell(r.examples), f"{r.seconds:.1f}", shrunk))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    for r in rows:
        for error in r.errors:
            out.append(f"error in {r.variant}: {error}")
    return "\n".join(out)


def summary(rows: Sequence[Row]) -> str:
    bugs = [r for r in rows if r.kind == "bug"]
    legit = [r for r in rows if r.kind == "legit"]
    ref = [r for r in rows if r.kind == "reference"]
    sizes = [r.shrunk_messages for r in bugs if r.shrunk_messages is not None]
    median = f"{statistics.median(sizes):g}" if sizes else "-"
    parts = [
        f"detected {sum(r.detected for r in bugs)}/{len(bugs)} bug variants",
        f"legit flagged {sum(r.detected for r in legit)}/{len(legit)}",
    ]
    if ref:
        parts.append(f"reference flagged: {'YES' if ref[0].detected else 'no'}")
    parts.append(f"median shrunk counterexample {median} messages")
    parts.append(f"{sum(r.seconds for r in rows):.0f} s in all")
    return "; ".join(parts)


def _run_one(args: tuple[str, dict[str, Any]]) -> Row:
    name, options = args
    return run_variant(name, **options)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--only", nargs="+", default=None, help="these variants")
    parser.add_argument(
        "--all-properties", action="store_true", help="bug variants too run every property (default: stop at a failure)"
    )
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--max-examples", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0, help="the run seed (ci: 0); another shows what was luck")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--json", default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    names = list(QUICK) if args.quick else (args.only or variants())
    unknown = [n for n in names if n not in variants()]
    if unknown:
        print(f"run.py: unknown variant(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    options = {
        "profile": args.profile,
        "max_examples": args.max_examples,
        "first_only": not args.all_properties,
        "seed": args.seed,
    }
    jobs = max(1, min(args.jobs, len(names)))
    rows: list[Row] = []

    def progress(row: Row) -> None:
        rows.append(row)
        verdict = ", ".join(row.caught_by[:1]) or "nothing caught"
        print(f"[{len(rows)}/{len(names)}] {row.variant}: {verdict} ({row.seconds:.0f} s)", file=sys.stderr, flush=True)

    if jobs == 1:
        for n in names:
            progress(run_variant(n, **options))
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
            for row in pool.map(_run_one, [(n, options) for n in names]):
                progress(row)
    print(format_table(rows))
    print(summary(rows))
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_json() for r in rows], indent=2) + "\n", encoding="utf-8")
    bugs_missed = any(r.kind == "bug" and not r.detected for r in rows)
    legit_flagged = any(r.kind != "bug" and r.detected for r in rows)
    return 1 if bugs_missed or legit_flagged else 0


if __name__ == "__main__":
    sys.exit(main())
