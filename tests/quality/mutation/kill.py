"""The test entry mutmut runs: one test per property, each driving the in-process reference target.

A property that passes on the reference (the gate's ``reference`` run) must fail on a mutant that
changes what the contract requires; one test per property id lets the kill matrix say *which*
property killed it. The settings are the registered ``mutation``
profile (``ctxmodel/profiles.py``): derandomized, no example database (a mutant
must not inherit a failing example found on another), no deadline, ``differing_executors`` suppressed.

``CTXMODEL_MUTATION_EXAMPLES`` sets the examples per property (default 30: mutation runs each covering
test once per mutant, so it trades a little power for minutes; the kill matrix reports it).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import attrs
import pytest

from ctxmodel import gate
from ctxmodel.policies import resolve
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import all_properties
from ctxmodel.runs import RunConfig
from ctxmodel.targets.reference import ReferenceTarget

#: The ops whose code lives in the mutated modules (normalize, visibility, recover, the counter).
OPS = ("normalize", "effective", "request", "recover", "count")
EXAMPLES = int(os.environ.get("CTXMODEL_MUTATION_EXAMPLES", "30"))


#: The registered ``mutation`` profile (ctxmodel/profiles.py), at this run's example count.
MUTATION = attrs.evolve(get_profile("mutation"), max_examples=EXAMPLES)


#: The other policies the reference honours (``ctxmodel.targets.reference._normalize_options``): without
#: them the gate never drives its ``to_text`` and ``close`` code, declared policies being ``drop``/``leave``.
ALTERNATE = {"orphans": "to_text", "trailing": "close"}
ALT_SUFFIX = "@" + ",".join(f"{k}={v}" for k, v in ALTERNATE.items())

#: A tokenizer declaration of the object form with a fudge of its own (contract §7): the reference
#: declares ``zoo``, so without this case no mutation run parses a declaration inside a target's call,
#: and the counter's spec, fudge parsing and naming never run under a mutant.
TOKENIZER: dict[str, Any] = {"encoding": "o200k_base", "fudge": 1.25}
TOKENIZER_SUFFIX = "@tokenizer=o200k_base*1.25"
#: The properties whose verdicts rest on the declared counter: the count itself, and recovery's
#: budget arithmetic (what fits, what it reports, what it leaves alone).
TOKENIZER_CASES = ("count.agrees", "recover.fits-or-converges", "recover.reported-tokens",
                   "recover.within-budget-unchanged")


def property_ids() -> list[str]:
    """The properties of the ops the mutated modules serve; ``purity.*`` is left out: the reference is
    built from frozen attrs values and cannot write into its input whatever the mutant, and
    ``purity.recover`` alone takes longer than every other property together (it calls recover twice
    on megabyte histories)."""
    return [p.id for p in all_properties() if p.op in OPS and not p.id.startswith("purity.")]


def cases() -> list[str]:
    """Each property once under the reference's declared policies, the normalize and request
    properties again under the alternate policies it also honours (``prop@orphans=to_text,...``),
    and the count and budget properties again with the reference declaring ``TOKENIZER``."""
    ids = property_ids()
    return [*ids, *(f"{i}{ALT_SUFFIX}" for i in ids if i.split(".")[0] in ("normalize", "request")),
            *(f"{i}{TOKENIZER_SUFFIX}" for i in TOKENIZER_CASES if i in ids)]


@contextmanager
def _counters_built_under_mutant() -> Iterator[None]:
    """The target's counters built afresh inside its call, and the judge's given back after it.

    ``get_counter`` keeps one instance per tokenizer name for the process, built the first time any
    code asks, which is when the target is opened, before the mutant is switched on: a mutant of
    ``counter_spec``, ``Counter.__init__`` or the fudge's parsing would never run. Inside the call the
    target finds no instance and builds its own under the mutant; that instance is dropped after it,
    so it never reaches the judge.
    """
    from ctxmodel.tokens import counter

    judges = dict(counter._INSTANCES)
    counter._INSTANCES.clear()
    try:
        yield
    finally:
        counter._INSTANCES.clear()
        counter._INSTANCES.update(judges)


class MutantTarget:
    """The reference as a target, the mutant switched on only inside its calls.

    mutmut's trampolines read ``MUTANT_UNDER_TEST`` on every call, and the harness shares code with
    the reference: the counter is the contract's yardstick (§5), and one warning asks the reference
    whether recovery was possible (``recover.gives-up-where-possible``). With the mutant on everywhere
    the yardstick would move with the target; here only the target is mutated, and the harness judging
    it is not.
    """

    def __init__(self, mutant: str, tokenizer: str | dict[str, Any] = "zoo") -> None:
        self.inner = ReferenceTarget(tokenizer)
        self.description = self.inner.description
        self.mutant = mutant

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        # The counter caches per text and block, and the target and the harness share this process:
        # a counter mutant counts with counters of its own (empty caches, built under the mutant), so
        # its counts neither reach the judge nor are hidden by the judge's cache.
        counter_mutant = self.mutant.startswith("ctxmodel.tokens.counter.")
        os.environ["MUTANT_UNDER_TEST"] = self.mutant
        try:
            with _counters_built_under_mutant() if counter_mutant else nullcontext():
                return self.inner.call(op, params)
        finally:
            os.environ["MUTANT_UNDER_TEST"] = ""  # "" is "no mutant", and wins over mutmut's fallback

    def close(self) -> None:
        self.inner.close()


def run_one(case: str, examples: int | None = None) -> Any:
    """The gate's own runner on the (mutated) reference: the outcome of one property."""
    from ctxmodel.properties.registry import get

    prop_id, _, alternate = case.partition("@")
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    os.environ["MUTANT_UNDER_TEST"] = ""
    declared = alternate.startswith("tokenizer=")
    target = MutantTarget(mutant, TOKENIZER if declared else "zoo")
    overrides = dict(ALTERNATE) if alternate and not declared else {}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            return gate.run_property(
                get(prop_id),
                target,
                RunConfig(profile=MUTATION, policies=resolve(target.description.policies, overrides),
                          fixtures_dir=scratch, seed=0, max_examples=examples, database=None),
            )
    finally:
        os.environ["MUTANT_UNDER_TEST"] = mutant


def killed(outcome: Any) -> bool:
    """A failure, or a warning: the reference is held to its own strict choices (contract §4 "Reference"),
    and the un-mutated reference draws no warning, so a warning on a mutant (typically "gave up where
    recovery was possible", contract §4.8) is a change the mutant made."""
    return bool(outcome.status != "passed" or outcome.warnings_total)


@pytest.mark.parametrize("case", cases())
def test_property(case: str) -> None:
    outcome = run_one(case)
    detail = "; ".join(f.message for f in (*outcome.failures, *outcome.warnings)) or outcome.reason
    assert not killed(outcome), f"{case}: {outcome.status}: {detail}"
