"""The ``inputs=agent-stored`` policy (contract §7): the rewrite into the space, and what a
declaration changes in the verdicts (flags on shapes an agent never stores go, real ones stay)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings

from ctxmodel.gate import run_property
from ctxmodel.policies import resolve
from ctxmodel.profiles import Profile
from ctxmodel.properties.registry import get
from ctxmodel.runs import RunConfig
from ctxmodel.strategies import histories
from ctxmodel.strategies.stored import INTERRUPTED, agent_stored
from ctxmodel.targets import open_target

Msg = dict[str, Any]
S = "python:tests.targets.agent_stored"
PROFILE = Profile("witness", max_examples=120, deterministic=True, use_database=False,
                  phases=(Phase.explicit, Phase.generate))


def use(tid: str) -> Msg:
    return {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": "a.py"}}


def result(tid: str) -> Msg:
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


def test_a_repeated_id_within_one_message_keeps_its_first_block() -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [use("a"), {"type": "text", "text": "x"}, use("a"), use("b")]}]
    assert agent_stored(history)[1]["content"] == [use("a"), {"type": "text", "text": "x"}, use("b")]


def test_a_call_followed_by_an_assistant_message_gets_the_interrupted_results_stored_between() -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [use("a"), use("b")], "condenseParent": "c1", "ts": 5},
               {"role": "assistant", "content": "next"},
               {"role": "user", "content": "Summary", "isSummary": True, "condenseId": "c1"}]
    out = agent_stored(history)
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert out[2] == {"role": "user", "condenseParent": "c1", "ts": 5, "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": INTERRUPTED},
        {"type": "tool_result", "tool_use_id": "b", "content": INTERRUPTED}]}


def test_tags_naming_nothing_or_a_parent_before_the_message_are_stripped() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "a", "condenseParent": "s1", "truncationParent": "t1"},
        {"role": "user", "content": "[Sliding window truncation]", "isTruncationMarker": True, "truncationId": "t1"},
        {"role": "assistant", "content": "Summary one", "isSummary": True, "condenseId": "s1"},
        {"role": "user", "content": "b", "condenseParent": "s2", "truncationParent": "gone"},
        {"role": "assistant", "content": "Summary two", "isSummary": True, "condenseId": "s2"},
        {"role": "user", "content": "c", "condenseParent": "s1"},
        {"role": "user", "content": "d", "condenseParent": "s2", "truncationParent": "t1"},
        {"role": "user", "content": "e", "truncationParent": "nowhere", "condenseParent": "nothing"},
    ]
    out = agent_stored(history)
    assert out[0] == history[0]  # both parents come after it: kept
    assert out[3] == {"role": "user", "content": "b", "condenseParent": "s2"}
    assert out[5] == {"role": "user", "content": "c"}
    assert out[6] == {"role": "user", "content": "d"}
    assert out[7] == {"role": "user", "content": "e"}


def test_the_last_summary_keeps_no_tag_and_an_earlier_one_keeps_its_own() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "task"},
        {"role": "user", "content": "Summary one", "isSummary": True, "condenseId": "s1", "condenseParent": "s2"},
        {"role": "user", "content": "Summary two", "isSummary": True, "condenseId": "s2", "truncationParent": "t1"},
        {"role": "assistant", "content": "b", "truncationParent": "t1"},
        {"role": "user", "content": "[Sliding window truncation]", "isTruncationMarker": True, "truncationId": "t1"},
    ]
    out = agent_stored(history)
    assert out[1] == history[1]  # condensed by the later summary: an agent stores that
    assert out[2] == {"role": "user", "content": "Summary two", "isSummary": True, "condenseId": "s2"}
    assert out[3] == history[3]


def test_shapes_agents_do_store_are_kept() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [use("a"), use("b")]},
               {"role": "user", "content": [result("a"), image, result("b"), result("b"), result("zz")]},
               {"role": "user", "content": [{"type": "text", "text": "h"}, result("a")]},
               {"role": "assistant", "content": [use("c")]}]
    assert agent_stored(history) == history


@settings(max_examples=150, deadline=None, database=None)
@given(histories())
def test_the_rewrite_is_pure_and_idempotent(history: list[Msg]) -> None:
    before = copy.deepcopy(history)
    once = agent_stored(history)
    assert history == before
    assert agent_stored(once) == once


def _status(spec: str, prop_id: str, tmp_path: Path, **override: str) -> str:
    target = open_target(spec)
    policies = resolve(target.description.policies, override)
    return run_property(get(prop_id), target,
                        RunConfig(profile=PROFILE, policies=policies, fixtures_dir=tmp_path)).status


@pytest.mark.slow  # two gate runs per case: half a minute each on a busy 2-core machine
@pytest.mark.parametrize(("cls", "prop_id"), [
    ("KeepsRepeatsWithinMessage", "normalize.duplicate-ids"),
    ("DanglingHidesStored", "effective.visibility"),
])
def test_a_flaw_on_a_shape_never_stored_is_flagged_only_without_the_declaration(
        cls: str, prop_id: str, tmp_path: Path) -> None:
    assert _status(f"{S}:{cls}", prop_id, tmp_path / "declared") == "passed"
    assert _status(f"{S}:{cls}", prop_id, tmp_path / "any", inputs="any") == "failed"


def test_a_flaw_on_a_shape_agents_store_is_still_flagged(tmp_path: Path) -> None:
    assert _status(f"{S}:ResultsSplitStored", "normalize.results-lead", tmp_path) == "failed"


@pytest.mark.parametrize("prop_id", ["normalize.results-lead", "normalize.orphans-per-policy",
                                     "effective.visibility", "recover.no-new-pairing-violations"])
def test_a_correct_target_passes_in_the_declared_space(prop_id: str, tmp_path: Path) -> None:
    assert _status(f"{S}:ReferenceStored", prop_id, tmp_path) == "passed"
