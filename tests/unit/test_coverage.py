"""The partition of each op's input space: the classifier, the plans, the cell-first
strategies, ``check --coverage`` and the fuzz report's coverage table.

The reduced CI form of "every ci run reaches every cell": for a few cells per op (the ones the
issue's missed bugs live in), a ci-profile draw (60 examples, generation only) of the property's
own strategy reaches them. The full claim (every property, every judged cell, seed 0) is the slow
test at the end; ``ctxmodel check --coverage`` shows it on any target.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from hypothesis import Phase, find, given, seed, settings
from hypothesis.database import InMemoryExampleDatabase

from ctxmodel import partition
from ctxmodel.partition import (
    CELLS,
    IMPOSSIBLE,
    Coverage,
    cells_of,
    effective_cells,
    judged,
    matches,
    normalize_cells,
    recover_parts,
    request_count,
    window_for,
)
from ctxmodel.profiles import get_profile
from ctxmodel.properties.registry import all_properties, get

Msg = dict[str, Any]

CJK = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后" * 10
PROSE = "the build fails because the config file is missing a key and the test reads it. " * 40


def _use(tid: str) -> Msg:
    return {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": "a.py"}}


def _result(tid: str, content: Any) -> Msg:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def _request(messages: list[Msg], allowed: int, max_tokens: int = 100, system_prompt: str = "") -> dict[str, Any]:
    reserve = max_tokens if max_tokens > 0 else partition.DEFAULT_RESERVE
    return {"messages": messages, "contextWindow": window_for(allowed, reserve), "maxTokens": max_tokens,
            "systemPrompt": system_prompt}


#: A task, a text exchange worth hiding, then a tool call whose giant result is never hidden.
HISTORY: list[Msg] = [
    {"role": "user", "content": "Please fix the failing test."},
    {"role": "assistant", "content": PROSE[:1500]},
    {"role": "user", "content": "go on"},
    {"role": "assistant", "content": [_use("toolu_a")]},
    {"role": "user", "content": [_result("toolu_a", PROSE[:2500])]},
]


# -- the classifier on hand-written inputs ---------------------------------------------------------


def test_recover_regimes_of_hand_written_requests() -> None:
    count = request_count(HISTORY)
    kept = request_count([HISTORY[0], {"role": "user", "content": "[Sliding window truncation: 2 messages hidden]"},
                          *HISTORY[3:]])
    assert recover_parts(_request(HISTORY, count + 5))[0] == "within"
    assert recover_parts(_request(HISTORY, count))[0] == "at-allowed"
    assert recover_parts({**_request(HISTORY, 10), "contextWindow": 100, "maxTokens": 8192})[0] == "allowed<=0"
    assert recover_parts(_request(HISTORY, count - 10, max_tokens=-1))[0] == "reserve-gap"
    assert recover_parts(_request(HISTORY, count - 10, max_tokens=0))[0] == "reserve-gap"
    assert recover_parts(_request(HISTORY, count - 1)) == ("over-hide", "plain", "string")
    assert recover_parts(_request(HISTORY, kept - 100)) == ("over-degrade-only", "plain", "string")
    assert recover_parts(_request(HISTORY, 20)) == ("over-stuck", "plain", "string")
    # One task, one call, one short result: nothing may be hidden, nothing shrinks (§4.3, §4.5).
    single = [HISTORY[0], {"role": "assistant", "content": [_use("toolu_b")]},
              {"role": "user", "content": [_result("toolu_b", "x" * 230)]}]
    assert recover_parts(_request(single, request_count(single) - 1)) == ("over-none", "plain", "string")
    assert partition.recover_cell(_request(single, request_count(single) + 1)) == "recover:within/plain"


def test_visible_kinds() -> None:
    task: Msg = {"role": "user", "content": "task"}
    summary: Msg = {"role": "user", "content": "Summary", "isSummary": True, "condenseId": "c1"}
    marker: Msg = {"role": "user", "content": "[Sliding window truncation]", "isTruncationMarker": True,
                   "truncationId": "t1"}
    assert partition.visible_kind([task, {"role": "assistant", "content": "hi"}]) == "plain"
    assert partition.visible_kind([task, summary, {"role": "assistant", "content": "hi"}]) == "condensed"
    after = {"role": "assistant", "content": "hi", "condenseParent": "c1"}
    assert partition.visible_kind([summary, task, after]) == "condensed"  # hidden after the last summary too
    tagged: Msg = {"role": "assistant", "content": "x", "truncationParent": "t1"}
    assert partition.visible_kind([task, tagged, marker]) == "truncated"
    assert partition.visible_kind([task, {**tagged, "truncationParent": "gone"}]) == "dangling"
    legacy = {**marker, "role": "assistant"}
    tagged_after = {"role": "user", "content": "x", "truncationParent": "t1"}
    assert partition.visible_kind([task, legacy, tagged_after]) == "legacy"


def test_degradable_kinds() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}

    def history(*contents: Any) -> list[Msg]:
        ids = [f"toolu_{k}" for k in range(len(contents))]
        return [{"role": "user", "content": "task"}, {"role": "assistant", "content": [_use(i) for i in ids]},
                {"role": "user", "content": [_result(i, c) for i, c in zip(ids, contents, strict=True)]}]

    assert partition.degradable_kind(history("short")) == "none"
    assert partition.degradable_kind(history("x" * 200)) == "none"  # the floor itself: nothing to cut
    assert partition.degradable_kind(history("x" * 201)) == "string"
    assert partition.degradable_kind(history([image, {"type": "text", "text": PROSE[:900]}])) == "image"
    assert partition.degradable_kind(history(CJK[:300])) == "dense"
    assert partition.degradable_kind(history(CJK[:300], PROSE[:1000])) == "string"  # the largest decides
    assert partition.degradable_kind(history(CJK[:300], [image, {"type": "text", "text": "x" * 250}])) == "dense"


def test_effective_cells_of_a_hand_written_history() -> None:
    history: list[Msg] = [
        {"role": "user", "content": "a", "condenseParent": "s1"},
        {"role": "user", "content": "S1", "isSummary": True, "condenseId": "s1"},
        {"role": "assistant", "content": "b", "truncationParent": "m1"},
        {"role": "user", "content": "S2", "isSummary": True, "condenseId": "s2", "condenseParent": "s1"},
        {"role": "assistant", "content": "c", "condenseParent": "s1"},
        {"role": "user", "content": "d", "condenseParent": "s2", "truncationParent": "gone"},
        {"role": "user", "content": "[marker]", "isTruncationMarker": True, "truncationId": "m1"},
    ]
    assert effective_cells(history) == {
        "effective:condenseParent/earlier-summary/before",
        "effective:truncationParent/marker/before",
        "effective:condenseParent/earlier-summary/after",  # hidden: a parent anywhere in the input hides
        "effective:condenseParent/last-summary/after",
        "effective:truncationParent/dangling/after",
    }  # the last summary's own tag is not a cell: it is always visible


def test_normalize_cells_are_per_turn() -> None:
    history: list[Msg] = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [_use("toolu_a"), _use("toolu_b")]},
        {"role": "user", "content": [{"type": "text", "text": "look"}, _result("toolu_a", "x")]},
        {"role": "assistant", "content": [_use("toolu_c")]},
        {"role": "user", "content": [_result("toolu_c", "x"), _result("toolu_c", "y")]},
        {"role": "assistant", "content": [_use("toolu_a")]},
        {"role": "user", "content": [_result("toolu_a", "x")]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": [_result("toolu_zz", "x"), {"type": "text", "text": ""}]},
    ]
    assert [sorted(k) for _, k in partition.normalize_defects(history)] == [
        [], ["lead", "missing"], ["dup-result"], ["dup-use"], ["orphan", "other"]]
    assert normalize_cells(history) == {"normalize:clean", "normalize:lead+missing", "normalize:dup-result",
                                        "normalize:dup-use", "normalize:orphan+other"}
    # Judged on what is sent: a hidden message's defects are no turn's.
    hidden = [{**history[4], "truncationParent": "t"}, {"role": "user", "content": "m", "isTruncationMarker": True,
                                                        "truncationId": "t"}]
    assert "normalize:dup-result" not in normalize_cells([*history[:4], *hidden])


def test_unreadable_input_is_unclassified_not_an_error() -> None:
    assert cells_of("recover", {"messages": "nope"}) == {"recover:unclassified"}
    assert cells_of("count", {"messages": []}) == set()


# -- the partition and the plans -------------------------------------------------------------------


def test_the_partition_names_and_impossible_cells() -> None:
    assert len(CELLS["effective"]) == 16 and len(CELLS["normalize"]) == 22
    assert len(CELLS["recover"]) == 4 * 5 + 4 * 5 * 4 - 5
    assert not set(IMPOSSIBLE) & set(CELLS["recover"])
    assert all(len(c) <= 50 for op in CELLS for c in CELLS[op])
    assert matches("recover:over-stuck/*/dense", "recover:over-stuck/legacy/dense")
    assert not matches("recover:over-stuck/*/dense", "recover:over-stuck/legacy")
    assert not matches("recover:within/*", "effective:within/plain")


def test_every_recover_property_has_a_plan_that_a_ci_run_can_reach() -> None:
    plans = {p.id: p.plan for p in all_properties() if p.op == "recover"}
    for pid, plan in plans.items():
        assert plan is not None and judged(pid, "recover") == plan.judged, pid
        assert 1 <= len(plan.draw) <= 11, pid
        for pattern in plan.judged:
            assert any(matches(pattern, c) for c in CELLS["recover"]), (pid, pattern)
        assert sum(plan.per_regime().values()) == pytest.approx(60)
    within = plans["recover.within-budget-unchanged"]
    assert within is not None and within.per_regime() == {"within": 30.0, "at-allowed": 30.0}
    assert judged("normalize.results-lead", "normalize") == CELLS["normalize"]
    assert judged("count.agrees", "count") == ()


def test_cell_requests_refuse_unknown_patterns_and_mixed_knobs() -> None:
    from ctxmodel.strategies import recovery_requests

    with pytest.raises(ValueError, match="matches no recover cell"):
        recovery_requests(cells=["recover:over-degrade-only/plain/none"])
    with pytest.raises(ValueError, match="replaces"):
        recovery_requests(cells=["recover:within/*"], cases=("within",))


# -- the strategies reach the cells (the reduced CI form) -------------------------------------------

#: (property, a cell pattern it judges): the regimes the issue's missed bugs live in, and a few more.
REACH = [
    ("recover.degrade-only-text", "recover:over-degrade-only/condensed/*"),  # degrading hidden results
    ("recover.degraded-shrink", "recover:over-degrade-only/*/dense"),  # the notice just above the floor
    ("recover.degraded-shrink", "recover:over-hide/*/string"),  # a target that degrades before it hides
    ("recover.fits-or-converges", "recover:over-stuck/*/*"),  # success over budget where none fits
    ("recover.progress-or-error", "recover:over-none/dangling/*"),
    ("recover.within-budget-unchanged", "recover:at-allowed/condensed"),
    ("effective.visibility", "effective:condenseParent/earlier-summary/after"),  # after the last summary
    ("effective.subsequence", "effective:truncationParent/last-summary/before"),
    ("normalize.results-lead", "normalize:lead+missing"),
    ("normalize.orphans-per-policy", "normalize:orphan"),
    ("normalize.duplicate-ids", "normalize:dup-use+other"),
]

_CI_DRAW = settings(get_profile("ci").hypothesis_settings(database=None), phases=(Phase.generate,))


@pytest.mark.parametrize(("prop_id", "pattern"), REACH)
def test_a_ci_draw_of_the_property_reaches_its_cell(prop_id: str, pattern: str) -> None:
    prop = get(prop_id)
    assert pattern in judged(prop.id, prop.op) or any(matches(pattern, c) for c in judged(prop.id, prop.op))
    found = find(prop.params({}), lambda p: any(matches(pattern, c) for c in cells_of(prop.op, p)),
                 settings=_CI_DRAW, random=random.Random(0))
    assert any(matches(pattern, c) for c in cells_of(prop.op, found))


def test_each_example_is_a_fresh_draw_of_its_cell() -> None:
    # Hypothesis follows a generated example with mutations that keep its first choices: without the
    # guard a 60-example run met about 17 cells; with it, nearly every example draws its own (35 to 39
    # distinct in 40 over seeds 0 to 19, 32 once on another machine). The seed is pinned so that the
    # test checks the guard, not the luck of one run.
    seen: list[str] = []

    @seed(0)
    @given(get("recover.allowed-nonpositive-errors").params({}))
    @settings(get_profile("ci").hypothesis_settings(database=InMemoryExampleDatabase(), max_examples=40))
    def run(params: dict[str, Any]) -> None:
        seen.append(json.dumps(params, sort_keys=True))

    run()
    assert len(seen) == 40 and len(set(seen)) >= 30


# -- check --coverage and the fuzz report ----------------------------------------------------------


@attrs.frozen
class _Prop:
    id: str
    op: str


def test_coverage_table_names_reached_and_never_reached_cells() -> None:
    def classify(op: str, params: Mapping[str, Any]) -> set[str]:
        return set(params["cells"])

    table = Coverage(classify=classify)
    within = _Prop("recover.within-budget-unchanged", "recover")
    table.add(within, {"cells": ["recover:within/plain"]})
    table.add(within, {"cells": ["recover:at-allowed/condensed"]})
    table.add(_Prop("count.agrees", "count"), {"cells": []})
    text = table.format([within, _Prop("count.agrees", "count")])
    row = next(line for line in text.splitlines() if line.startswith("recover.within-budget-unchanged"))
    assert row.split()[1:4] == ["2", "10", "2"]
    assert "within/condensed" in row and "at-allowed/plain" in row and "within/plain," not in row
    assert "within/plain 1" in text
    assert "recover: 2 of 95 possible cells reached" in text
    assert "impossible: over-degrade-only/plain/none" in text
    assert "no partition (not counted): count.agrees" in text


def test_check_coverage_prints_the_table_after_the_summary(tmp_path: Path) -> None:
    from ctxmodel.cli import cli

    result = CliRunner().invoke(cli, [
        "check", "--target", "reference", "--property", "recover.allowed-nonpositive-errors", "--max-examples", "8",
        "--profile", "ci", "--coverage", "--fixtures", str(tmp_path / "fx"), "--regressions", str(tmp_path / "none"),
    ])
    assert result.exit_code == 0, result.output
    summary, _, table = result.output.partition("coverage: the cells")
    assert "seed 0" in summary
    row = next(line for line in table.splitlines() if line.startswith("recover.allowed-nonpositive-errors"))
    assert row.split()[1:3] == ["8", "5"]
    assert "allowed<=0/" in table


def test_the_summary_shows_the_cells_each_property_judged(tmp_path: Path) -> None:
    """Without --coverage too: the summary's cells column, reached out of those it can judge."""
    from ctxmodel.cli import cli

    result = CliRunner().invoke(cli, [
        "check", "--target", "reference", "--property", "recover.allowed-nonpositive-errors", "--property",
        "count.agrees", "--max-examples", "8", "--profile", "ci", "--fixtures", str(tmp_path / "fx"),
        "--regressions", str(tmp_path / "none"),
    ])
    assert result.exit_code == 0, result.output
    assert "coverage: the cells" not in result.output
    header = next(line for line in result.output.splitlines() if line.startswith("property"))
    assert header.split()[:3] == ["property", "examples", "cells"]
    row = next(line for line in result.output.splitlines() if line.startswith("recover.allowed-nonpositive-errors"))
    reached, _, total = row.split()[2].partition("/")
    assert 0 < int(reached) <= int(total), row
    counts = [line for line in result.output.splitlines() if line.startswith("count.")]
    assert counts and all(line.split()[2] == "-" for line in counts)  # count has no partition


def test_fuzz_report_shows_coverage_and_drops_hypothesis_internals() -> None:
    from ctxmodel.fuzz.report import render_html
    from ctxmodel.fuzz.results import CampaignResult, PropertyStats

    events = Counter({"cell: recover:over-hide/plain/string": 3, "cell: recover:over-stuck/legacy/none": 1,
                      "Retried draw from integers(0, 65535).filter(_refuse_first) to satisfy filter": 4,
                      "feature: summary": 2})
    props = (PropertyStats("recover.tagging-rules", "recover", "contract §4.3", "s", 4, dict(events)),)
    result = CampaignResult(
        target={"spec": "reference", "name": "t", "version": "1"}, policies={}, database="none", workers=1, seed=0,
        started="2026-01-01T00:00:00Z", finished="2026-01-01T00:00:01Z", duration=1.0, stopped="max-examples",
        properties=props, failures=(), timeline=((0.0, 0, 0),), versions={}, exit_code=0,
    )
    page = render_html(result.to_json())
    visible = page.split('<script type="application/json"', 1)[0]
    assert "Retried draw" not in visible
    assert "feature: summary" in visible
    row = visible.split('data-coverage="recover.tagging-rules"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num" data-figure="reached">2</td>' in row  # over-hide/plain/*, over-stuck/*/*
    assert "over-hide/condensed/*" in row and "reserve-gap/*" in row
    assert "over-stuck/*/*" not in row.split('data-figure="never">', 1)[1].split("</td>", 1)[0]


# -- the full claim --------------------------------------------------------------------------------


def _collecting(op: str, into: set[str]) -> Callable[[dict[str, Any]], None]:
    """A test body adding the cells of each drawn input to ``into`` (@given takes no defaults)."""

    def body(params: dict[str, Any]) -> None:
        into.update(cells_of(op, params))

    return body


@pytest.mark.slow
def test_every_property_reaches_every_cell_it_judges_in_a_ci_run() -> None:
    """What ``ctxmodel check --profile ci --coverage`` shows, without a target: the ci draws of every
    property of recover, effective and normalize (seed 0) reach every pattern the property judges."""
    from hypothesis import given as given_

    from ctxmodel.gate import property_seed
    from ctxmodel.hypothesis_hooks import set_seed, without_local_constants

    missed: dict[str, list[str]] = {}
    for prop in all_properties():
        patterns = judged(prop.id, prop.op)
        if not patterns:
            continue
        reached: set[str] = set()
        test: Any = given_(prop.params({}))(_collecting(prop.op, reached))
        test = get_profile("ci").hypothesis_settings(database=None)(test)
        set_seed(test, property_seed(0, prop.id))
        with without_local_constants():
            test()
        never = [p for p in patterns if not any(matches(p, c) for c in reached)]
        if never:
            missed[prop.id] = never
    assert not missed


def test_a_declared_input_space_leaves_its_cells_out_of_the_table(tmp_path: Path) -> None:
    """With ``inputs=agent-stored`` (contract §7) the cells of shapes a correct agent never stores are
    named as left out, with the reason, and are not counted as never reached."""
    from ctxmodel.cli import cli

    result = CliRunner().invoke(cli, [
        "check", "--target", "reference", "--property", "effective.visibility", "--max-examples", "60",
        "--profile", "ci", "--coverage", "--policy", "inputs=agent-stored", "--fixtures", str(tmp_path / "fx"),
        "--regressions", str(tmp_path / "none"),
    ])
    assert result.exit_code == 0, result.output
    table = result.output.partition("coverage: the cells")[2]
    row = next(line for line in table.splitlines() if line.startswith("effective.visibility"))
    examples, judged, reached, *_ = row.split()[1:]
    assert (examples, judged) == ("60", "16") and 1 <= int(reached) <= 4
    never = row.split(None, 4)[4]
    assert "dangling" not in never and "earlier-summary" not in never and "condenseParent/marker" not in never
    assert re.search(r"effective: [1-4] of 4 possible cells reached by some property", table)
    assert "effective: left out: condenseParent/dangling/before" in table
    assert "condenseParent/earlier-summary/after, condenseParent/last-summary/after (inputs=agent-stored" in table
