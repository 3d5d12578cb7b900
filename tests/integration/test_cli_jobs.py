"""``ctxmodel check --jobs N`` gives the verdicts, fixtures and summary of ``--jobs 1`` at the same seed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner, Result
from hypothesis import strategies as st

from ctxmodel.cli import cli
from ctxmodel.properties import catalogue, registry

TWO_BUGS = "python:tests.targets.two_bugs:ImagesAndDuplicates"
RAISING = "python:tests.targets.faulty.raising"

_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}]}
_RESULT = {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"}
_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
_MESSAGES = [
    {"role": "user", "content": "hi"},
    _USE,
    {"role": "user", "content": [_RESULT]},
    {"role": "user", "content": [_RESULT, _IMAGE]},
]


def small_histories(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """Histories of a few messages, where both of ``two_bugs``' bugs show and shrink in a moment."""
    return st.fixed_dictionaries({"messages": st.lists(st.sampled_from(_MESSAGES), max_size=6)})


def _small(prop_id: str) -> catalogue.Property:
    return attrs.evolve(registry.get(prop_id), id=f"zz-jobs.{prop_id}", params=small_histories)


# Module-level, so that a worker process unpickles them by reference.
SMALL = [
    _small("normalize.results-lead"),
    _small("normalize.keeps-hidden"),
    _small("normalize.keeps-other-content"),
    _small("normalize.valid-results-kept"),  # after results-lead, so never-run under -x
]


@pytest.fixture(autouse=True)
def small_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_properties()
    for prop in SMALL:
        monkeypatch.setitem(catalogue._REGISTRY, prop.id, prop)


def check(tmp_path: Path, jobs: int, *args: str) -> tuple[Result, Path]:
    """One run in its own fixtures directory and example database, so neither run feeds the other."""
    root = tmp_path / f"jobs{jobs}"
    fixtures = root / "fx"
    result = CliRunner(env={"HYPOTHESIS_STORAGE_DIRECTORY": str(root / "hypothesis")}).invoke(
        cli,
        ["check", "--profile", "ci", "--seed", "0", "--fixtures", str(fixtures), "--regressions", str(root / "none"),
         "--jobs", str(jobs), *args],
        catch_exceptions=False,
    )
    return result, fixtures


def summary(result: Result) -> list[str]:
    """The per-property summary table and the totals: everything but seconds and fixture paths."""
    lines = result.output.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("property"))
    return lines[start:]


def fixtures(directory: Path) -> dict[str, dict[str, object]]:
    found = {}
    for path in sorted(directory.glob("*.json")):
        fixture = json.loads(path.read_text())
        found[path.name] = {k: fixture[k] for k in ("property", "kind", "params", "observed", "severity")}
    return found


@pytest.mark.parametrize("stop", [[], ["-x"], ["--coverage"]])
def test_two_jobs_fail_the_same_properties_with_the_same_shrunk_fixtures(tmp_path: Path, stop: list[str]) -> None:
    args = ["--target", TWO_BUGS, "--max-examples", "20", "--property", "zz-jobs", *stop]
    one, one_fx = check(tmp_path, 1, *args)
    two, two_fx = check(tmp_path, 2, *args)
    assert one.exit_code == two.exit_code == 1, (one.output, two.output)
    assert summary(two) == summary(one)
    assert len(fixtures(one_fx)) >= 2 and fixtures(two_fx) == fixtures(one_fx)
    assert any(line.startswith("zz-jobs.normalize.valid-results-kept") and "NEVER RUN" in line
               for line in summary(one)) == (stop == ["-x"])


def test_a_baseline_gives_the_same_verdicts_with_two_jobs(tmp_path: Path) -> None:
    args = ["--target", TWO_BUGS, "--max-examples", "20", "--property", "zz-jobs"]
    _, known = check(tmp_path / "first", 1, *args)
    one, _ = check(tmp_path, 1, *args, "--baseline", str(known))
    two, _ = check(tmp_path, 2, *args, "--baseline", str(known))
    assert one.exit_code == two.exit_code == 0, (one.output, two.output)
    assert summary(two) == summary(one)


def test_a_target_fault_is_reported_by_the_same_property_as_with_one_job(tmp_path: Path) -> None:
    # Both properties start at once and both meet the fault; the second must not report it again.
    args = ["--target", RAISING, "--max-examples", "5", "--property", "zz-jobs"]
    one, one_fx = check(tmp_path, 1, *args)
    two, two_fx = check(tmp_path, 2, *args)
    assert one.exit_code == two.exit_code == 1, (one.output, two.output)
    assert summary(two) == summary(one)
    assert [name.split("-")[:2] for name in fixtures(two_fx)] == [["target", "exception"]]
    assert fixtures(two_fx) == fixtures(one_fx)


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_fewer_than_one_job_is_a_usage_error(tmp_path: Path, jobs: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--target", "reference", "--jobs", jobs], catch_exceptions=False)
    assert result.exit_code == 2
    assert f"ctxmodel: --jobs {jobs}: expected at least 1" in result.output
