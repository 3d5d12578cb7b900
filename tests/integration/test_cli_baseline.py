"""``ctxmodel check --baseline DIR``: adopting the gate on a target with known bugs (contract §8, §9).

The two bugs of ``tests/targets/two_bugs.py`` are found from their minimal inputs given as
regressions (explicit examples, nothing to shrink), so each run takes seconds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner, Result

from ctxmodel.cli import cli
from ctxmodel.fixtures import Fixture, load_fixture, write_atomic

TWO_BUGS = "python:tests.targets.two_bugs:ImagesAndDuplicates"
FIXED = "python:tests.targets.variant_reference:Reference"
PROPERTY = "normalize.results-lead"
AFTER_IMAGE = f"{PROPERTY}/result-after-image"
DUPLICATE = f"{PROPERTY}/duplicate-result"

_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}}]}
_FIRST = {"role": "user", "content": [{"type": "text", "text": "h"}]}
_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}
_RESULT = {"type": "tool_result", "tool_use_id": "toolu_a", "content": ""}
#: An image beside a result (the target puts it first) / a lone result (the target sends it twice).
IMAGE_INPUT = {"messages": [_FIRST, _USE, {"role": "user", "content": [_RESULT, _IMAGE]}]}
DUPLICATE_INPUT = {"messages": [_FIRST, _USE, {"role": "user", "content": [_RESULT]}]}
CLEAN_INPUT = {"messages": [_FIRST]}


def _fixture(path: Path, params: dict[str, Any], kind: str = PROPERTY, prop: str = PROPERTY) -> Path:
    fixture = Fixture(
        property=prop, op="normalize", params=params, observed=[], target={"name": "test", "version": "1"},
        policies={}, tokenizer="zoo", found={}, note="", kind=kind,
    )
    return write_atomic(path, fixture.to_json())


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A scratch working directory holding ``seeds/``: the two bugs' minimal inputs as regressions."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / ".hypothesis"))
    _fixture(tmp_path / "seeds" / "image.json", IMAGE_INPUT)
    _fixture(tmp_path / "seeds" / "duplicate.json", DUPLICATE_INPUT)
    return tmp_path


def check(target: str, *args: str, seeds: str = "seeds") -> Result:
    argv = ["check", "--target", target, "--property", PROPERTY, "--profile", "ci", "--max-examples", "5",
            "--regressions", seeds, *args]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def kinds_in(directory: Path) -> set[str]:
    return {load_fixture(p).kind for p in directory.glob("*.json")} if directory.is_dir() else set()


def first_run_as_baseline(work: Path) -> Path:
    first = check(TWO_BUGS, "--fixtures", "first")
    assert first.exit_code == 1, first.output
    assert kinds_in(work / "first") == {AFTER_IMAGE, DUPLICATE}
    shutil.copytree(work / "first", work / "baseline")
    return work / "baseline"


def test_a_run_whose_failures_are_all_in_the_baseline_exits_0_and_says_known(work: Path) -> None:
    first_run_as_baseline(work)
    result = check(TWO_BUGS, "--baseline", "baseline", "--fixtures", "again", "--junit", "gate.xml")
    assert result.exit_code == 0, result.output
    assert "replayed first: 2 reproduce(s)" in result.output
    assert f"known        {AFTER_IMAGE}: still fails" in result.output
    assert f"known        {DUPLICATE}: still fails" in result.output
    assert "0 new, 2 still failing (known), 0 fixed" in result.output
    assert "FAILED" not in result.output
    assert kinds_in(work / "again") == set()  # nothing new, nothing shrunk again
    case = ElementTree.parse(work / "gate.xml").getroot().find("testcase")
    assert case is not None
    skipped = case.find("skipped")
    assert skipped is not None and case.find("failure") is None
    assert skipped.get("type") == "ctxmodel.known-failure"
    assert AFTER_IMAGE in skipped.get("message", "") and DUPLICATE in skipped.get("message", "")


def test_a_kind_missing_from_the_baseline_fails_the_run_and_only_it_is_named_new(work: Path) -> None:
    baseline = first_run_as_baseline(work)
    for path in baseline.glob("*.json"):
        if load_fixture(path).kind == DUPLICATE:
            path.unlink()
    result = check(TWO_BUGS, "--baseline", "baseline", "--fixtures", "again")
    assert result.exit_code == 1, result.output
    assert f"FAILED {DUPLICATE}" in result.output and f"FAILED {AFTER_IMAGE}" not in result.output
    assert f"NEW          {DUPLICATE}: fixture again/" in result.output
    assert f"known        {AFTER_IMAGE}: still fails" in result.output
    assert "1 new, 1 still failing (known), 0 fixed" in result.output
    assert kinds_in(work / "again") == {DUPLICATE}


def test_a_fixed_target_exits_0_and_reports_every_kind_fixed(work: Path) -> None:
    first_run_as_baseline(work)
    result = check(FIXED, "--baseline", "baseline", "--fixtures", "again")
    assert result.exit_code == 0, result.output
    assert "replayed first: 0 reproduce(s), 2 no longer reproduce(s)" in result.output
    assert f"fixed        {AFTER_IMAGE}: baseline/" in result.output
    assert "0 new, 0 still failing (known), 2 fixed" in result.output


def test_a_stale_baseline_fixture_of_a_kind_the_run_meets_again_is_known_with_a_fresh_fixture(work: Path) -> None:
    """The fixture's input no longer shows its kind, but the search still finds the kind: not fixed."""
    _fixture(work / "baseline" / "stale.json", CLEAN_INPUT, kind=DUPLICATE)
    (work / "seeds" / "image.json").unlink()
    result = check(TWO_BUGS, "--baseline", "baseline", "--fixtures", "again")
    assert result.exit_code == 0, result.output
    assert "replayed first: 0 reproduce(s), 1 no longer reproduce(s)" in result.output
    assert f"known        {DUPLICATE}: still fails: baseline/stale.json no longer reproduces, but the run met it; " \
        "a fresh fixture to replace it: again/" in result.output
    assert kinds_in(work / "again") == {DUPLICATE}


def test_a_kind_whose_property_is_not_selected_is_not_checked(work: Path) -> None:
    _fixture(work / "baseline" / "other.json", CLEAN_INPUT, kind="normalize.idempotent", prop="normalize.idempotent")
    result = check(FIXED, "--baseline", "baseline", "--fixtures", "again")
    assert result.exit_code == 0, result.output
    assert "not checked  normalize.idempotent: not checked: its property is not selected" in result.output
    assert "0 new, 0 still failing (known), 0 fixed, 1 not checked" in result.output


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("unknown-property", "ctxmodel: baseline/x.json: property: unknown property 'normalize.gone' (renamed"),
        ("bad-schema", "ctxmodel: baseline/x.json: schema: expected 'ctxmodel-fixture/1', got 'v0'"),
        ("foreign-kind", "ctxmodel: baseline/x.json: kind: 'recover.sequential/x' is not a kind of property"),
        ("same-as-fixtures", "ctxmodel: --baseline baseline: the same directory as --fixtures"),
        ("no-directory", "ctxmodel: --baseline baseline: not a directory"),
    ],
)
def test_an_unusable_baseline_exits_2_with_one_line(work: Path, setup: str, message: str) -> None:
    path = work / "baseline" / "x.json"
    extra: list[str] = []
    if setup == "unknown-property":
        _fixture(path, CLEAN_INPUT, kind="normalize.gone", prop="normalize.gone")
    elif setup == "bad-schema":
        path.parent.mkdir()
        path.write_text(json.dumps({"schema": "v0"}), encoding="utf-8")
    elif setup == "foreign-kind":
        _fixture(path, CLEAN_INPUT, kind="recover.sequential/x")
    elif setup == "same-as-fixtures":
        path.parent.mkdir()
        extra = ["--fixtures", "baseline"]
    result = check(TWO_BUGS, "--baseline", "baseline", *extra)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_replay_of_a_baseline_lists_the_kinds_still_there_and_exits_1_while_any_is(work: Path) -> None:
    baseline = first_run_as_baseline(work)
    _fixture(baseline / "stale.json", CLEAN_INPUT, kind=DUPLICATE)
    runner = CliRunner()
    broken = runner.invoke(cli, ["replay", "baseline", "--target", TWO_BUGS], catch_exceptions=False)
    assert broken.exit_code == 1, broken.output
    assert "3 fixture(s): 2 reproduce(s), 1 no longer reproduce(s)" in broken.output
    still = broken.output.split("still there:\n")[1].splitlines()
    assert sorted(line.split()[0] for line in still) == [DUPLICATE, AFTER_IMAGE]
    assert f"passes   baseline/stale.json ({DUPLICATE}): no longer reproduces" in broken.output
    fixed = runner.invoke(cli, ["replay", "baseline", "--target", FIXED], catch_exceptions=False)
    assert fixed.exit_code == 0, fixed.output
    assert "3 fixture(s): 0 reproduce(s), 3 no longer reproduce(s)" in fixed.output
    assert "still there" not in fixed.output


TWO_CAUSES = "python:tests.targets.two_causes:FloorAndTrailingResults"
_SYSTEM = {"role": "system", "content": "Answer briefly."}
_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}]}
_RESULT_TEXT = {"role": "tool", "tool_call_id": "call_a", "content": "x = 1\n" * 40}
#: Nothing fits, so the floor is sent / the trailing result is put back over the budget.
FLOOR_INPUT = {"messages": [_SYSTEM, {"role": "user", "content": "h"}], "maxTokens": 1}
TRAILING_INPUT = {"messages": [{"role": "user", "content": "h"}, _CALL, _RESULT_TEXT], "maxTokens": 30}


def _trim_fixture(path: Path, params: dict[str, Any]) -> Path:
    fixture = Fixture(property="trim.fits", op="trim", params=params, observed=[], target={"name": "test",
                      "version": "1"}, policies={}, tokenizer="zoo", found={}, note="", kind="trim.fits")
    return write_atomic(path, fixture.to_json())


def test_two_causes_of_one_rule_give_two_fixtures_and_a_baseline_of_one_still_fails(
        work: Path) -> None:
    _trim_fixture(work / "causes" / "floor.json", FLOOR_INPUT)
    _trim_fixture(work / "causes" / "trailing.json", TRAILING_INPUT)
    argv = ["check", "--target", TWO_CAUSES, "--property", "trim.fits", "--profile", "ci", "--max-examples", "5",
            "--regressions", "causes", "--fixtures", "first"]
    first = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert first.exit_code == 1, first.output
    found = kinds_in(work / "first")
    assert {"trim.fits/error-expected", "trim.fits/over-budget"} <= found, found
    (work / "baseline").mkdir()
    for path in (work / "first").glob("*.json"):
        if load_fixture(path).kind == "trim.fits/error-expected":
            shutil.copy(path, work / "baseline" / path.name)
    again = CliRunner().invoke(cli, [*argv[:-2], "--fixtures", "again", "--baseline", "baseline"],
                               catch_exceptions=False)
    assert again.exit_code == 1, again.output
    assert "NEW          trim.fits/over-budget" in again.output, again.output
