"""A verdict says what was judged: a property whose every input met a known target fault is not
passed, and a target that faults on every call stops the run instead of costing every property."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from click.testing import CliRunner

from ctxmodel.cli import cli

ALWAYS = "python:tests.targets.faulty.always_raises"
SOMETIMES = "python:tests.targets.faulty.raising"


def _check(tmp_path: Path, target: str, *args: str) -> tuple[int, str, ElementTree.Element]:
    junit = tmp_path / "junit.xml"
    result = CliRunner(env={"HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp")}).invoke(
        cli,
        ["check", "--target", target, "--profile", "ci", "--seed", "0", "--max-examples", "10",
         "--fixtures", str(tmp_path / "fx"), "--regressions", str(tmp_path / "none"), "--junit", str(junit),
         "--ops", "normalize", *args],
        catch_exceptions=False,
    )
    return result.exit_code, result.output, ElementTree.parse(junit).getroot()


def test_a_property_whose_every_input_met_a_known_fault_is_not_judged_and_the_run_stops(tmp_path: Path) -> None:
    code, output, junit = _check(tmp_path, ALWAYS)
    assert code == 1, output
    lines = [line for line in output.splitlines() if line.startswith("normalize.")]
    results = [line.split("  ")[-1] for line in lines]
    assert results[0].startswith("FAILED"), output
    assert results[1].startswith("NOT JUDGED: every input"), output
    assert all(r.startswith("NEVER RUN: the target met a known fault on every input") for r in results[2:]), output
    assert len(results) > 3
    assert " passed" not in output.split("property")[-1].splitlines()[-1], output
    assert int(junit.get("failures", "0")) == 2
    assert sum(case.find("failure") is not None for case in junit.iter("testcase")) == 2


def test_a_property_that_judged_some_inputs_says_how_many(tmp_path: Path) -> None:
    code, output, _ = _check(tmp_path, SOMETIMES, "--max-examples", "40", "--property", "normalize.duplicate-ids",
                             "--property", "normalize.idempotent")
    assert code == 1, output
    judged = [line for line in output.splitlines() if "(judged " in line and "inputs met target-exception" in line]
    assert judged, output
