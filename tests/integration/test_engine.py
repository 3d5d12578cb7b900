"""The engine: one run told as events, the same whichever scheduler or entry point runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from ctxmodel import engine
from ctxmodel.engine import RunConfig
from ctxmodel.events import (
    Callback,
    Event,
    ExampleDrawn,
    FixtureWritten,
    Heartbeat,
    KindMet,
    PropertyFinished,
    PropertyStarted,
    RunFinished,
    RunStarted,
    TargetFault,
)
from ctxmodel.profiles import get_profile
from ctxmodel.properties import catalogue, registry
from ctxmodel.targets import open_target
from tests.integration.test_cli_jobs import RAISING, SMALL, TWO_BUGS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def small_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_properties()
    for prop in SMALL:
        monkeypatch.setitem(catalogue._REGISTRY, prop.id, prop)


class Recorder:
    """Every event, and whether each fixture was on disk when its event was told."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.on_disk: list[bool] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, FixtureWritten):
            self.on_disk.append(event.path.exists())


def _config(tmp_path: Path, jobs: int, spec: str, max_examples: int = 20) -> RunConfig:
    return RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / f"fx{jobs}", seed=0,
                     max_examples=max_examples, database=None, jobs=jobs, target_spec=spec)


def _run(tmp_path: Path, jobs: int, spec: str = TWO_BUGS) -> Recorder:
    recorder = Recorder()
    target = open_target(spec)
    try:
        config = attrs.evolve(_config(tmp_path, jobs, spec), policies=target.description.policies)
        engine.run(SMALL, config, target=target, handlers=[recorder])
    finally:
        target.close()
    return recorder


def _comparable(event: Event) -> tuple[Any, ...]:
    """An event without what differs between two runs of the same inputs (seconds, directories)."""
    if isinstance(event, RunStarted):
        return ("RunStarted", event.seed, event.properties)
    if isinstance(event, RunFinished):
        outcomes = event.report.outcomes
        return ("RunFinished", tuple((o.prop.id, o.status, tuple(k.key for k in o.kinds)) for o in outcomes))
    if isinstance(event, PropertyFinished):
        o = event.outcome
        return ("PropertyFinished", o.prop.id, o.status, o.examples, tuple((k.key, k.params) for k in o.kinds))
    if isinstance(event, FixtureWritten):
        return ("FixtureWritten", event.prop.id, event.key, event.path.name)
    if isinstance(event, ExampleDrawn):
        return ("ExampleDrawn", event.prop.id, json.dumps(event.params, sort_keys=True))
    if isinstance(event, KindMet | TargetFault):
        return (type(event).__name__, event.prop.id, event.key)
    if isinstance(event, PropertyStarted):
        return ("PropertyStarted", event.prop.id)
    return (type(event).__name__,)


def test_a_run_is_told_in_order_and_every_fixture_is_on_disk_when_told(tmp_path: Path) -> None:
    recorder = _run(tmp_path, 1)
    kinds = [type(e) for e in recorder.events]
    assert kinds[0] is RunStarted and kinds[-1] is RunFinished
    assert kinds.count(PropertyStarted) == kinds.count(PropertyFinished) == len(SMALL)
    current = None
    for event in recorder.events[1:-1]:
        if isinstance(event, PropertyStarted):
            assert current is None
            current = event.prop.id
        elif isinstance(event, PropertyFinished):
            assert event.outcome.prop.id == current
            current = None
        elif not isinstance(event, Heartbeat):
            assert getattr(event, "prop").id == current, event  # noqa: B009
    met = [e.key for e in recorder.events if isinstance(e, KindMet)]
    assert len(met) >= 2 and len(set(met)) == len(met)
    assert recorder.on_disk and all(recorder.on_disk)


def test_two_jobs_tell_the_same_events_as_one(tmp_path: Path) -> None:
    one = [_comparable(e) for e in _run(tmp_path, 1).events if not isinstance(e, Heartbeat)]
    two = [_comparable(e) for e in _run(tmp_path, 2).events if not isinstance(e, Heartbeat)]
    assert two == one


def test_a_target_fault_is_told_once_by_the_property_that_met_it(tmp_path: Path) -> None:
    for jobs in (1, 2):
        faults = [e for e in _run(tmp_path / str(jobs), jobs, RAISING).events if isinstance(e, TargetFault)]
        assert [(e.prop.id, e.key) for e in faults] == [(SMALL[0].id, "target-exception")]


def test_a_handler_that_wants_no_examples_gets_none_and_costs_none(tmp_path: Path) -> None:
    seen: list[Event] = []
    target = open_target(TWO_BUGS)
    try:
        engine.run(SMALL[:1], _config(tmp_path, 1, TWO_BUGS), target=target,
                   handlers=[Callback(seen.append, frozenset({PropertyFinished, KindMet}))])
    finally:
        target.close()
    assert {type(e) for e in seen} == {PropertyFinished, KindMet}


def _fixture_kinds(directory: Path) -> set[str]:
    return {json.loads(p.read_text())["kind"] for p in directory.glob("*.json")}


def test_check_jobs_and_the_pytest_plugin_find_the_same_kinds(tmp_path: Path) -> None:
    """One property, one two-bug target, one seed: ``check``, ``check --jobs 2`` and the pytest
    plugin are the same engine, so they meet the same kinds and write the same fixtures."""
    prop = SMALL[0]
    found = {}
    for jobs in (1, 2):
        target = open_target(TWO_BUGS)
        try:
            config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / f"check{jobs}", seed=0,
                               max_examples=20, database=None, jobs=jobs, target_spec=TWO_BUGS,
                               policies=target.description.policies)
            engine.run([prop], config, target=target)
        finally:
            target.close()
        found[f"check --jobs {jobs}"] = _fixture_kinds(tmp_path / f"check{jobs}")
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "conftest.py").write_text(
        "from ctxmodel.properties import catalogue, registry\n"
        "from tests.integration.test_cli_jobs import SMALL\n"
        "registry.all_properties()\n"
        "catalogue._REGISTRY.update({p.id: p for p in SMALL})\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "--rootdir", str(plugin),
         "--ctxmodel-target", TWO_BUGS, "--ctxmodel-property", prop.id, "--ctxmodel-profile", "ci",
         "--ctxmodel-seed", "0", "--ctxmodel-max-examples", "20", "--ctxmodel-fixtures", str(plugin / "fx"),
         "--ctxmodel-regressions", str(plugin / "none"), "-o", "addopts=", "-o", "testpaths=", str(plugin)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp")},
    )
    assert run.returncode == 1, run.stdout + run.stderr
    found["pytest plugin"] = _fixture_kinds(plugin / "fx")
    assert len(found["check --jobs 1"]) >= 2, found
    assert found["check --jobs 2"] == found["check --jobs 1"] == found["pytest plugin"], found



@pytest.mark.slow
def test_fuzz_meets_the_kinds_check_meets(tmp_path: Path, fresh_storage: Path) -> None:
    """A fuzz campaign is a scheduler over the same property runner: on a two-bug target it keeps
    every kind ``check`` keeps (not one per property), each with its own fixture."""
    spec, prop = TWO_BUGS, "normalize.results-lead"
    target = open_target(spec)
    try:
        config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "check", seed=0, max_examples=60,
                           database=None, policies=target.description.policies)
        engine.run([registry.get(prop)], config, target=target)
    finally:
        target.close()
    fuzz = subprocess.run(
        [sys.executable, "-m", "ctxmodel", "fuzz", "--target", spec, "--max-examples", "60", "--workers", "1",
         "--seed", "0", "--property", prop, "--no-agent-loop", "--fixtures", str(tmp_path / "fuzz"),
         "--report", str(tmp_path / "report"), "--db", str(tmp_path / "db")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(fresh_storage)},
    )
    assert fuzz.returncode == 1, fuzz.stdout[-2000:] + fuzz.stderr[-2000:]
    checked = _fixture_kinds(tmp_path / "check")
    assert len(checked) >= 2 and _fixture_kinds(tmp_path / "fuzz") == checked
