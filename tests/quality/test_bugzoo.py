"""The reduced CI form of the bug zoo (``tests/quality/zoo``): CI notices when the harness loses power.

Three parts, each a small sample of a full run documented in ``tests/quality/README.md``:

- zoo bug variants are detected by the property that guards their clause, with the ``ci`` profile;
- legitimate variants (other valid policies, an independent implementation) pass those properties;
- a sample of mutants of the reference (the mutation operators mutmut applies: comparison flips,
  operator swaps, constant tweaks, statement deletion) is killed by the property that should kill it.

Each variant is checked through ``tests.quality.zoo.run.run_variant``, i.e. the gate's own
``run_property``, restricted to one or two properties so the whole file stays at a few minutes.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from tests.quality.zoo.run import declared, run_variant
from tests.quality.zoo.seeds import RARE, missed_seeds, scan

#: (variant, the property expected to catch it): one per family of domain §2-§4. The ones whose
#: search and shrink take under half a minute on a busy 2-core machine run in every CI run (a loss
#: of power fails CI); the others are in the slow tier.
_SLOW = pytest.mark.slow
DETECTED = [
    pytest.param("bug_global_id_set", "normalize.orphans-per-policy", marks=_SLOW),
    pytest.param("bug_synthetic_unmarked", "normalize.synthetic-marked", marks=_SLOW),
    pytest.param("bug_vis_first_summary", "effective.visibility", marks=_SLOW),
    pytest.param("bug_zero_progress_success", "recover.progress-or-error", marks=_SLOW),
    pytest.param("bug_allowed_nonpositive_noop", "recover.allowed-nonpositive-errors", marks=_SLOW),
    pytest.param("bug_count_per_message_rounding", "count.agrees", marks=_SLOW),
    # Found only after a zoo run sharpened a property or a strategy: CI keeps them found.
    pytest.param("bug_marker_assistant_role", "recover.tagging-rules", marks=_SLOW),
    pytest.param("bug_closes_trailing", "normalize.trailing-per-policy", marks=_SLOW),
    ("bug_count_flat_images", "count.agrees"),
    ("bug_vis_dangling_parent_hides", "effective.visibility"),
    # Reached only once the recover cells varied what a cell's name does not fix (contract §4.5, §4.7).
    pytest.param("bug_converges_one_cut", "recover.fits-or-converges", marks=_SLOW),
    pytest.param("bug_notice_guard_prefix", "recover.degraded-shrink", marks=_SLOW),
    # Reached once the normalize cells drew orphans of every content form (contract §3.4).
    pytest.param("bug_orphan_text_object", "normalize.orphans-per-policy", marks=_SLOW),
]

#: (legitimate variant, properties its declared policy bears on): it must pass them.
LEGIT = [
    ("legit_orphans_any", ("normalize.orphans-per-policy", "normalize.no-relabel")),
    ("legit_last_duplicate_wins", ("normalize.valid-results-kept",)),
    ("legit_degrade_only", ("recover.degraded-shrink", "recover.progress-or-error")),
    # Flagged in an earlier full run: a false alarm of the property, then a flaw of the variant.
    ("legit_orphans_to_text", ("normalize.orphans-per-policy",)),
    ("legit_converges_recover", ("recover.fits-or-converges",)),
]


def test_zoo_has_the_issue_counts() -> None:
    zoo = list(declared().values())
    assert sum(v.expected == "bug" for v in zoo) >= 25
    assert sum(v.expected == "legit" for v in zoo) >= 8
    for variant in zoo:
        assert variant.clause.startswith("contract §"), variant.name
        assert variant.description, variant.name


@pytest.mark.parametrize(("variant", "prop"), DETECTED)
def test_bug_variant_detected(variant: str, prop: str) -> None:
    row = run_variant(variant, property_ids=[prop], first_only=True)
    assert row.detected, f"{variant} ({row.clause}) was not caught by {prop}"
    assert row.caught_by == (prop,)
    assert row.shrunk_messages is not None and row.shrunk_messages <= 6


@pytest.mark.parametrize(("variant", "props"), LEGIT)
def test_legit_variant_passes(variant: str, props: tuple[str, ...]) -> None:
    row = run_variant(variant, property_ids=list(props))
    assert row.properties_run == len(props)
    assert not row.detected, f"{variant} flagged by {', '.join(row.caught_by)}"
    assert not row.errors


# -- a sample of mutants of the reference ------------------------------------------------------

#: (module, source line as written, the mutant's line, the property that must kill it).
MUTANTS = [
    ("ctxmodel.visibility", "if start >= 0 and i < start:", "if start >= 0 and i <= start:", "effective.visibility"),
    pytest.param("ctxmodel.normalize", "blocks = head + others", "blocks = others + head", "normalize.results-lead",
                 marks=pytest.mark.slow),
    ("ctxmodel.normalize", "if rid in wanted:", "if rid not in wanted:", "normalize.valid-results-kept"),
    ("ctxmodel.recover", "if prev <= allowed:", "if prev < allowed:", "recover.within-budget-unchanged"),
]


def _killed_in_child(module_name: str, old: str, new: str, prop: str, queue: Any) -> None:
    """Swap in the mutated module source, then run the property through the gate on the reference.

    The whole module is mutated, the properties' yardstick included (the reference's ``effective``,
    its budget): the sample holds mutants a property sees without that yardstick (the full run in
    ``tests/quality/mutation`` mutates the target alone).
    """
    import importlib

    module = importlib.import_module(module_name)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    assert source.count(old) == 1, f"{module_name}: the mutated line {old!r} is not in the source once"
    exec(compile(source.replace(old, new), module.__file__ or module_name, "exec"), module.__dict__)
    for dependent in ("ctxmodel.recover",):  # modules that imported the mutated names by value
        dep = importlib.import_module(dependent)
        for name in ("effective", "visible_mask"):
            if module_name == "ctxmodel.visibility" and hasattr(dep, name):
                setattr(dep, name, getattr(module, name))
    from tests.quality.mutation.kill import run_one

    queue.put(run_one(prop, examples=60).status)


@pytest.mark.parametrize(("module", "old", "new", "prop"), MUTANTS)
def test_mutant_killed(module: str, old: str, new: str, prop: str) -> None:
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_killed_in_child, args=(module, old, new, prop, queue))
    child.start()
    child.join(300)
    if child.is_alive():
        child.kill()
        pytest.fail(f"{module} mutant {new!r} hung")
    assert child.exitcode == 0, f"the mutant child failed to run ({child.exitcode})"
    assert queue.get(timeout=5) == "failed", f"{prop} did not kill {module}: {old!r} -> {new!r}"


#: Variants of ``zoo.seeds.RARE`` a run still misses at some of the 20 seeds, with those seeds
#: (measured with ``python -m tests.quality.zoo.seeds --seeds 20``): their regime is a few percent of
#: the draws of the cell it lies in, and a 60-example run meets that cell a handful of times. A seed
#: missed outside this table fails the test (a loss of power), and so does one of these seeds caught
#: (the table is then out of date: a strategy change moved the misses, or removed them).
KNOWN_MISSES: dict[str, tuple[int, ...]] = {}


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "props"), RARE)
def test_rare_regime_caught_at_every_seed(variant: str, props: tuple[str, ...]) -> None:
    missed = missed_seeds(scan(((variant, props),), seeds=20, jobs=1)[variant])
    assert missed == KNOWN_MISSES.get(variant, ()), f"{variant} ({', '.join(props)}) missed at seeds {missed}"
