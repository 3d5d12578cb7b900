"""Every property catches a deliberately broken target (HACKING.md: a property no witness can fail
is a bug). Each property declares its witnesses with its check (``Witness``: a target spec and the
finding code it must produce); each witness breaks one thing, and the test asserts that its property
reports it with that code."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import Phase

from ctxmodel.gate import run_property
from ctxmodel.policies import resolve
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Witness
from ctxmodel.properties.registry import all_properties, get
from ctxmodel.results import Outcome
from ctxmodel.runs import RunConfig, RunOptions
from ctxmodel.targets import Description, TargetFailure, open_target
from ctxmodel.targets.base import OPS

#: (property id, witness): every witness every property declares with its check.
WITNESSES: list[tuple[str, Witness]] = [(p.id, w) for p in all_properties() for w in p.witnesses]


def _witness_id(prop_id: str, witness: Witness) -> str:
    return f"{prop_id}:{witness.target.rpartition(':')[2].rpartition('.')[2]}"


#: Enough examples for the rarer shapes (a far-over recovery that succeeds, a pair next to a cut);
#: deterministic, no shrinking and no trimming: the test asks which kinds a property finds, not for
#: the minimal input.
PROFILE = Profile("witness", max_examples=200, deterministic=True, use_database=False,
                  phases=(Phase.explicit, Phase.generate))


def _outcome(target: Any, prop_id: str, tmp_path: Any, max_examples: int | None = None,
             code: str | None = None) -> Outcome:
    """The property's run on the target; with ``code``, the search ends once a kind of that code is met."""
    policies = resolve(target.description.policies)

    # The keys a finding of that code is kept under (``results.finding_key``): a target fault's is its
    # code, a property's ``id/code``, or the bare id for a finding without a code.
    wanted = set() if code is None else {code, f"{prop_id}/{code}"} if code else {prop_id}

    def enough(keys: frozenset[str]) -> bool:
        return bool(wanted & keys)

    return run_property(get(prop_id), target,
                        RunConfig(profile=PROFILE, policies=policies, fixtures_dir=tmp_path, max_examples=max_examples),
                        RunOptions(minimize=False, enough=enough))


@pytest.mark.parametrize(("prop_id", "witness"), WITNESSES, ids=[_witness_id(*w) for w in WITNESSES])
def test_witness_is_caught_by_its_property(prop_id: str, witness: Witness, tmp_path: Any) -> None:
    # A warning never stops the run, so a warning witness gets fewer examples.
    target = open_target(witness.target)
    try:
        outcome = _outcome(target, prop_id, tmp_path, None if witness.severity == "fail" else 40, witness.code)
    finally:
        target.close()
    if witness.severity == "fail":
        codes = [k.finding.code for k in outcome.kinds]
        assert outcome.status == "failed", f"{prop_id} did not catch {witness.target}"
    else:
        codes = [k.finding.code for k in outcome.warned]
        assert outcome.status == "passed" and codes, f"{prop_id} gave no warning for {witness.target}"
    assert witness.code in codes, f"{prop_id} met {codes} on {witness.target}, not {witness.code!r}"


def test_every_property_declares_a_witness() -> None:
    assert not [p.id for p in all_properties() if not p.witnesses]


def test_every_op_has_a_purity_property() -> None:
    assert {p.op for p in all_properties() if p.id.startswith("purity.")} == set(OPS) - {"describe"}


class DirectTarget:
    """An in-process target that hands the target object the probe's own params (no copy), as an
    agent's code would be handed its caller's history: what a mutation looks like from outside."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        reply = obj.describe({})
        self.description = Description(reply["name"], reply["version"], frozenset(reply["ops"]),
                                       reply["tokenizer"], reply["policies"])

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            result: dict[str, Any] = getattr(self.obj, op)(params)
        except Exception as exc:
            raise TargetFailure("exception", f"{op}: {exc}") from None
        return result

    def close(self) -> None:
        pass


#: Every witness of mutation: a ``python:`` target whose op writes into the params it was handed.
MUTATORS = [(pid, w) for pid, w in WITNESSES if w.code == "mutates-input"]


@pytest.mark.parametrize(("prop_id", "witness"), MUTATORS, ids=[pid for pid, _ in MUTATORS])
def test_mutating_input_is_caught_in_process(prop_id: str, witness: Witness, tmp_path: Any) -> None:
    """The same targets handed the probe's own params, as an agent's code is handed its caller's (they
    write into every non-empty history, so a few examples show it)."""
    module, _, name = witness.target.removeprefix("python:").partition(":")
    target = DirectTarget(getattr(importlib.import_module(module), name)())
    outcome = _outcome(target, prop_id, tmp_path, max_examples=20)
    assert outcome.status == "failed"
    assert [k.finding.code for k in outcome.kinds] == ["mutates-input"]
