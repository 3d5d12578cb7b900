"""Every property catches a deliberately broken target (HACKING.md: a property no witness can fail
is a bug). Each witness breaks one thing; the test asserts which property reports it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase

from ctxmodel.gate import run_property
from ctxmodel.policies import resolve
from ctxmodel.profiles import Profile
from ctxmodel.properties.registry import all_properties, get
from ctxmodel.targets import Description, TargetFailure, open_target
from tests.targets import broken_ops

N = "python:tests.targets.broken_normalize"
P = "python:tests.targets.broken_ops"
R = "python:tests.targets.broken_recover"

#: (target spec, property id, severity it must produce)
WITNESSES: list[tuple[str, str, str]] = [
    (f"{N}:ResultsSplit", "normalize.results-lead", "fail"),
    (f"{N}:LeavesLateDuplicate", "normalize.results-lead", "fail"),
    (f"{N}:ResultOrderReversed", "normalize.result-order", "fail"),
    (f"{N}:EditsValidResult", "normalize.valid-results-kept", "fail"),
    (f"{N}:PositionalRemap", "normalize.no-relabel", "fail"),
    (f"{N}:UnmarkedSynthetic", "normalize.synthetic-marked", "fail"),
    (f"{N}:SynthesizesOverValid", "normalize.synthetic-only-where-missing", "fail"),
    (f"{N}:DropsDeclaredToText", "normalize.orphans-per-policy", "fail"),
    (f"{N}:KeepsDuplicateToolUses", "normalize.duplicate-ids", "fail"),
    (f"{N}:StripsMetadata", "normalize.keeps-other-content", "fail"),
    (f"{N}:LeavesEmptiedMessages", "normalize.no-empty-messages", "fail"),
    (f"{N}:DropsAlreadyEmpty", "normalize.no-empty-messages", "fail"),
    (f"{N}:NotIdempotent", "normalize.idempotent", "fail"),
    (f"{N}:ClosesDeclaredLeave", "normalize.trailing-per-policy", "fail"),
    (f"{P}:DanglingParentsHide", "effective.visibility", "fail"),
    (f"{P}:CleansInEffective", "effective.subsequence", "fail"),
    (f"{P}:TextBeforeResults", "request.oracle", "fail"),
    (f"{P}:RemembersToolUses", "purity.normalize", "fail"),
    (f"{P}:RemembersToolUses", "purity.effective", "fail"),
    (f"{P}:RemembersToolUses", "purity.request", "fail"),
    (f"{P}:RemembersToolUses", "purity.recover", "fail"),
    (f"{P}:RemembersToolUses", "purity.count", "fail"),
    (f"{P}:CountsPerMessage", "count.agrees", "fail"),
    (f"{P}:CrashesOnLongWords", "count.pathological-answers", "fail"),
    (f"{P}:CountsImagesFlat", "count.agrees", "fail"),
    (f"{R}:LooseResultShape", "recover.result-shape", "fail"),
    (f"{R}:NoNonpositiveGuard", "recover.allowed-nonpositive-errors", "fail"),
    (f"{R}:RefusesWithinBudget", "recover.within-budget-unchanged", "fail"),
    (f"{R}:DeletesHidden", "recover.never-deletes", "fail"),
    (f"{R}:TagsFirstVisible", "recover.tagging-rules", "fail"),
    (f"{R}:SplitsPairs", "recover.no-new-pairing-violations", "fail"),
    (f"{R}:ReplacesImages", "recover.degrade-only-text", "fail"),
    (f"{R}:CutsWhatItHides", "recover.degrade-only-text", "warn"),
    (f"{R}:NoticeGrows", "recover.degraded-shrink", "fail"),
    (f"{R}:ZeroProgressSuccess", "recover.progress-or-error", "fail"),
    (f"{R}:SucceedsOverBudget", "recover.fits-or-converges", "fail"),
    (f"{R}:ErrorKeepsPartialWork", "recover.error-leaves-input", "fail"),
    (f"{R}:ErrorTextPlain", "recover.error-text", "fail"),
    (f"{R}:ClaimsToFit", "recover.reported-tokens", "fail"),
    (f"{R}:GivesUp", "recover.gives-up-where-possible", "warn"),
    (f"{R}:MarkerAsAssistant", "recover.tagging-rules", "fail"),
    (f"{R}:UnusedMarker", "recover.tagging-rules", "fail"),
    (f"{R}:StatusMarker", "recover.tagging-rules", "fail"),
    (f"{R}:MiscountsRemoved", "recover.result-shape", "warn"),
    (f"{N}:SendsOnlyVisible", "normalize.keeps-hidden", "fail"),
    # a bug only a second call reaches: the marker of the first truncation is tagged by the second
    ("python:tests.targets.broken_loop_marker", "recover.sequential", "fail"),
    ("python:tests.targets.broken_repair:RepairsNothing", "repair.request-accepted", "fail"),
    ("python:tests.targets.broken_repair:WritesTheRequest", "repair.keeps-hidden", "fail"),
    ("python:tests.targets.broken_repair:RelabelsInOrder", "repair.valid-results-kept", "fail"),
    ("python:tests.targets.broken_repair:NotIdempotent", "repair.idempotent", "fail"),
]

#: Enough examples for the rarer shapes (a far-over recovery that succeeds, a pair next to a cut);
#: deterministic, no shrinking: the test asks which property fails, not for the minimal input.
PROFILE = Profile("witness", max_examples=200, deterministic=True, use_database=False,
                  phases=(Phase.explicit, Phase.generate))


def _findings(target: Any, prop_id: str, tmp_path: Any, max_examples: int | None = None) -> tuple[str, int]:
    policies = resolve(target.description.policies)
    outcome = run_property(get(prop_id), target, policies=policies, tokenizer=target.description.tokenizer,
                           profile=PROFILE, fixtures_dir=tmp_path, max_examples=max_examples)
    return outcome.status, outcome.warnings_total


@pytest.mark.parametrize(("spec", "prop_id", "severity"), WITNESSES, ids=[w[1] for w in WITNESSES])
def test_witness_is_caught_by_its_property(spec: str, prop_id: str, severity: str, tmp_path: Any) -> None:
    # A warning never stops the run, so a warning witness gets fewer examples.
    status, warnings = _findings(open_target(spec), prop_id, tmp_path, None if severity == "fail" else 40)
    if severity == "fail":
        assert status == "failed", f"{prop_id} did not catch {spec}"
    else:
        assert status == "passed" and warnings > 0, f"{prop_id} gave no warning for {spec}"


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


@pytest.mark.parametrize("op", ["normalize", "effective", "request", "recover", "count"])
def test_mutating_input_is_caught(op: str, tmp_path: Any) -> None:
    status, _ = _findings(DirectTarget(broken_ops.MutatesInput()), f"purity.{op}", tmp_path)
    assert status == "failed"


def test_mutating_input_is_caught_through_a_python_spec(tmp_path: Any) -> None:
    """The ``python:`` transport hands the probe's private copy over as is, so mutation shows."""
    status, _ = _findings(open_target(f"{P}:MutatesInput"), "purity.normalize", tmp_path)
    assert status == "failed"


def test_every_property_has_a_witness() -> None:
    witnessed = {w[1] for w in WITNESSES}
    assert {p.id for p in all_properties()} <= witnessed
