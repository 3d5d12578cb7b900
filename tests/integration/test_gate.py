"""The gate runner (contract §8, §9): shrinking, fixtures before reports, faulty targets, warnings."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import attrs
import pytest
from hypothesis import strategies as st

from ctxmodel import engine, exitcodes, gate
from ctxmodel import report as rep
from ctxmodel.engine import GateReport, RunConfig
from ctxmodel.events import Callback, PropertyFinished
from ctxmodel.fixtures import load_fixture
from ctxmodel.profiles import get_profile
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property
from ctxmodel.targets import open_target
from ctxmodel.targets.base import Target

FAULTY = Path(__file__).parents[1] / "targets" / "faulty"


def _messages(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    message = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": st.text("ab", min_size=1, max_size=3)}
    )
    return st.fixed_dictionaries({"messages": st.lists(message, max_size=6)})


def _tiny(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """Few shapes, so shrinking against a slow faulty target (a restart per failing try) stays short."""
    return st.fixed_dictionaries({"messages": st.lists(st.just({"role": "user", "content": "a"}), max_size=3)})


def _returns_messages(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    reply = ex.result
    if not isinstance(reply.get("messages"), list):
        yield Finding.fail("normalize: the reply has no messages array", "{'messages': [...]}")


def _no_bb(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    """A toy property every target fails: no reply message may read "bb" (so shrinking has a known end)."""
    reply = ex.result
    for i, message in enumerate(reply["messages"]):
        if "bb" in message["content"]:
            yield Finding.fail(f"messages.{i}: reads bb", "no bb anywhere")


def _warns(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    if ex.params["messages"]:
        yield Finding.warn("a toy warning, the same every time")


def _effective_answers(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    return ()


SHAPE = Property(
    "toy.shape",
    "normalize",
    "contract §7",
    "normalize answers",
    _messages,
    _returns_messages,
    requires=frozenset({"normalize"}),
)
COUNT = Property(
    "toy.count", "normalize", "contract §3.6", "no bb", _messages, _no_bb, requires=frozenset({"normalize"})
)
EFFECTIVE = Property(
    "toy.effective",
    "effective",
    "contract §2",
    "effective answers",
    _messages,
    _effective_answers,
    requires=frozenset({"effective"}),
)
WARNS = Property("toy.warns", "normalize", "contract §7", "warns", _messages, _warns, requires=frozenset({"normalize"}))
TINY_SHAPE = attrs.evolve(SHAPE, params=_tiny)
TINY_EFFECTIVE = attrs.evolve(EFFECTIVE, params=_tiny)
RECOVER = Property(
    "toy.recover",
    "recover",
    "contract §4",
    "needs recover",
    _messages,
    _effective_answers,
    requires=frozenset({"recover"}),
)


def run(target: Target, props: list[Property], tmp_path: Path, spec: str = "reference", handlers: Any = (),
        **kw: Any) -> GateReport:
    config = RunConfig(
        policies=target.description.policies,
        profile=get_profile("ci"),
        fixtures_dir=tmp_path / "fx",
        max_examples=kw.pop("max_examples", 30),
        database=None,
        **kw,
    )
    return engine.run(props, config, target=target, handlers=handlers)


def faulty(name: str) -> str:
    return f"exec:{shlex.quote(sys.executable)} -S {shlex.quote(str(FAULTY / name))}"


def test_passing_properties_write_nothing_and_exit_0(tmp_path: Path) -> None:
    report = run(open_target("reference"), [SHAPE, EFFECTIVE], tmp_path)
    assert [o.status for o in report.outcomes] == ["passed", "passed"]
    assert all(o.examples > 0 for o in report.outcomes)
    assert not (tmp_path / "fx").exists()
    assert engine.exit_code(report.outcomes) == exitcodes.OK


def test_a_failure_is_shrunk_and_written_before_it_is_reported(tmp_path: Path) -> None:
    seen: list[bool] = []
    report = run(
        open_target("reference"),
        [COUNT],
        tmp_path,
        max_examples=100,
        handlers=[Callback(lambda e: seen.append(bool(e.outcome.fixtures)
                                                 and all(f.exists() for f in e.outcome.fixtures)),
                           frozenset({PropertyFinished}))],
    )
    (outcome,) = report.outcomes
    assert outcome.status == "failed" and seen == [True]
    assert engine.exit_code(report.outcomes) == exitcodes.FAILED
    assert outcome.kinds[0].params == {"messages": [{"role": "user", "content": "bb"}]}  # shrunk to the minimum
    text = rep.format_failure(outcome, "reference")
    assert "found:    messages.0: reads bb" in text and "required: no bb anywhere" in text
    assert "minimal input:" in text and "normalize returned:" in text
    fixture = load_fixture(outcome.kinds[0].fixture)  # type: ignore[arg-type]
    assert fixture.property == "toy.count" and fixture.op == "normalize"
    assert fixture.params == outcome.kinds[0].params
    assert fixture.observed[0]["op"] == "normalize" and "result" in fixture.observed[0]
    assert fixture.target == {"name": "ctxmodel-reference", "version": "0.1.0"}
    assert fixture.found["hypothesis"] and fixture.found["seed"] == 0
    assert "contract §3.6" in fixture.note
    assert outcome.kinds[0].fixture is not None and outcome.kinds[0].fixture.name.startswith("toy.count-")


def test_same_failure_same_file_and_reproduce_line(tmp_path: Path) -> None:
    target = open_target("python:tests.targets.faulty.raising")
    first = run(target, [SHAPE], tmp_path).outcomes[0]
    second = run(target, [SHAPE], tmp_path).outcomes[0]
    assert first.kinds[0].fixture == second.kinds[0].fixture
    assert len(list((tmp_path / "fx").glob("*.json"))) == 1
    text = rep.format_failure(first, "python:tests.targets.faulty.raising")
    assert "FAILED target-exception (met by toy.shape, contract §7)" in text  # a target fault is its own kind
    assert "IndexError" in text and "raising.py" in text
    fixture_path = first.kinds[0].fixture
    assert f"Reproduce with: ctxmodel replay {fixture_path} --target python:tests.targets.faulty.raising" in text
    # The minimal input that makes it raise: exactly two messages.
    assert first.kinds[0].params is not None and len(first.kinds[0].params["messages"]) == 2


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        ("crash_on_input.py", "crash"),
        ("hang.py", "timeout"),
        ("garbage.py", "protocol"),
    ],
)
def test_faulty_process_targets_fail_one_property_and_the_run_goes_on(tmp_path: Path, script: str, kind: str) -> None:
    spec = faulty(script)
    target = open_target(spec, timeout=0.5)
    try:
        report = run(target, [TINY_SHAPE, TINY_EFFECTIVE], tmp_path, spec=spec, max_examples=20)
    finally:
        target.close()
    shape, effective = report.outcomes
    assert shape.status == "failed" and effective.status == "passed"
    assert shape.kinds[0].params is not None and len(shape.kinds[0].params["messages"]) == 2  # shrunk to the trigger
    fixture = json.loads(shape.kinds[0].fixture.read_text())  # type: ignore[union-attr]
    assert fixture["observed"][-1]["failure"].startswith(f"{kind}: normalize:")
    assert f"the target did not answer normalize: {kind}" in rep.format_failure(shape, spec)
    assert shape.kinds[0].key == f"target-{kind}"


@pytest.mark.parametrize(("script", "match"), [("wrong_id.py", "reply has id"), ("huge.py", "larger than 32 MB")])
def test_protocol_breaks_on_every_input_still_give_a_fixture(tmp_path: Path, script: str, match: str) -> None:
    spec = faulty(script)
    target = open_target(spec)
    try:
        report = run(target, [TINY_SHAPE, TINY_EFFECTIVE], tmp_path, spec=spec, max_examples=3)
    finally:
        target.close()
    shape, effective = report.outcomes
    assert shape.status == "failed" and effective.status == "passed"
    assert shape.kinds[0].params == {"messages": []}
    assert match in shape.failures[0].message
    assert shape.kinds[0].fixture is not None and shape.kinds[0].fixture.exists()


def test_missing_ops_skip_and_warnings_never_fail(tmp_path: Path) -> None:
    target = open_target("python:tests.targets.faulty.raising")
    report = run(target, [RECOVER, EFFECTIVE], tmp_path)
    assert [o.status for o in report.outcomes] == ["skipped", "skipped"]
    assert report.outcomes[0].reason == "target has no recover"

    class Lenient:
        description = open_target("reference").description

        def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
            return {"messages": params["messages"]}

        def close(self) -> None:
            pass

    (outcome,) = run(Lenient(), [WARNS], tmp_path).outcomes
    assert outcome.status == "passed"
    assert outcome.warnings_total == 1 and len(outcome.warnings) == 1  # deduplicated
    assert "a toy warning" in rep.format_warnings([outcome])
    assert "passed, 1 warning(s)" in rep.format_summary([outcome])


def test_explicit_examples_run_first(tmp_path: Path) -> None:
    trigger = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    target = open_target("python:tests.targets.faulty.raising")
    report = run(target, [SHAPE], tmp_path, max_examples=1, regressions={"toy.shape": [trigger]})
    (outcome,) = report.outcomes
    assert outcome.status == "failed" and outcome.kinds[0].params == trigger
    # The fixture is judged first, as it stands; the search goes on after it (it looks for other kinds).
    assert outcome.kinds[0].first_example == 1 and outcome.examples >= 2
    replay_only = gate.run_property(
        SHAPE,
        target,
        RunConfig(profile=get_profile("replay"), tokenizer="zoo", fixtures_dir=tmp_path, database=None,
                  regressions={SHAPE.id: [{"messages": []}]}),
    )
    assert replay_only.status == "passed" and replay_only.examples == 1


def test_summary_junit_and_exit_codes(tmp_path: Path) -> None:
    target = open_target("python:tests.targets.faulty.raising")
    report = run(target, [SHAPE, RECOVER], tmp_path)
    summary = rep.format_summary(report.outcomes)
    assert "toy.shape" in summary and "FAILED" in summary and "skipped: target has no recover" in summary
    root = ElementTree.fromstring(rep.junit_xml(report.outcomes, target_spec="python:x"))
    assert root.get("tests") == "2" and root.get("failures") == "1" and root.get("skipped") == "1"
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert cases["toy.shape"].find("failure") is not None
    assert cases["toy.recover"].find("skipped") is not None
    broken = Property(
        "toy.broken",
        "normalize",
        "contract §7",
        "bad strategy",
        lambda _: st.just(1).map(lambda _: 1 / 0),  # type: ignore[arg-type, return-value]  # raises when drawn
        _returns_messages,
    )
    (error,) = run(open_target("reference"), [broken], tmp_path).outcomes
    assert error.status == "error" and "ZeroDivisionError" in error.reason
    assert engine.exit_code([error]) == exitcodes.USAGE
    assert engine.exit_code([*report.outcomes, error]) == exitcodes.FAILED


def test_the_example_database_is_kept_and_replays_the_failure(tmp_path: Path) -> None:
    """A seeded run still saves to and replays from the database (``hypothesis.seed()`` would not)."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    db = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    first = engine.run([COUNT], RunConfig(policies={}, profile=get_profile("ci"), fixtures_dir=tmp_path / "fx",
                                          max_examples=100, database=db), target=open_target("reference"))
    assert first.outcomes[0].status == "failed"
    assert any((tmp_path / "db").rglob("*")), "the failure was not saved to the database"
    again = engine.run([COUNT], RunConfig(policies={}, profile=get_profile("ci"), fixtures_dir=tmp_path / "fx2",
                                          max_examples=100, database=db, seed=12345), target=open_target("reference"))
    assert again.outcomes[0].status == "failed"
    (kind,) = again.outcomes[0].kinds
    assert kind.first_example == 1, "a different seed should still replay the stored failure first"
    # ... and then search on for other kinds: a replayed failure does not end the property's run.
    assert again.outcomes[0].examples > 3


@pytest.mark.mined_constants
def test_a_run_draws_no_constants_mined_from_loaded_modules() -> None:
    """The gate's verdict must follow from its seed alone, not from which modules were imported
    before it (contract §8: replayable); Hypothesis mines literals from every local module."""
    from hypothesis.internal.conjecture import providers

    from ctxmodel.hypothesis_hooks import without_local_constants as _without_local_constants

    # The private hook the gate pins: if Hypothesis renames it, this fails rather than the pin
    # silently doing nothing.
    assert callable(providers._get_local_constants)
    assert len(providers._get_local_constants()) > 0  # this test module's own literals, at least
    with _without_local_constants():
        assert len(providers._get_local_constants()) == 0
    assert len(providers._get_local_constants()) > 0


def _steers(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    from ctxmodel.strategies.labels import safe_target

    def steer(params: dict[str, Any]) -> dict[str, Any]:
        safe_target(float(len(params["messages"])), "toy")
        return params

    return _messages(policies).map(steer)


@pytest.mark.parametrize(("profile", "expected"), [("ci", False), ("thorough", True)])
def test_target_observations_only_where_the_target_phase_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str, expected: bool
) -> None:
    """Without the target phase an observation steers nothing but makes Hypothesis keep a Pareto
    front compared choice by choice (a third of a ``ci`` run); with it, the strategies' steering is
    what the phase climbs on."""
    from ctxmodel.strategies import labels

    seen: list[str] = []
    monkeypatch.setattr(labels, "target", lambda observation, label: seen.append(label))
    prop = attrs.evolve(SHAPE, params=_steers)
    outcome = gate.run_property(
        prop,
        open_target("reference"),
        RunConfig(profile=get_profile(profile), tokenizer="o200k_base", fixtures_dir=tmp_path / "fx", max_examples=5,
                  database=None),
    )
    assert outcome.status == "passed"
    assert bool(seen) is expected


@pytest.mark.slow
def test_two_bugs_in_one_property_give_two_fixtures_each_replaying_its_own(tmp_path: Path) -> None:
    from ctxmodel.fixtures import load_fixture as load
    from ctxmodel.gate import replay
    from ctxmodel.properties.registry import get

    spec = "python:tests.targets.two_bugs:ImagesAndDuplicates"
    target = open_target(spec)
    report = run(target, [get("normalize.results-lead")], tmp_path, spec=spec, max_examples=200)
    (outcome,) = report.outcomes
    keys = {k.key for k in outcome.kinds}
    assert {"normalize.results-lead/result-after-image", "normalize.results-lead/duplicate-result"} <= keys, keys
    for kind in outcome.kinds:
        fixture = load(kind.fixture)  # type: ignore[arg-type]
        assert fixture.kind == kind.key
        verdict = replay(fixture, target)
        assert {f.code for f in verdict.failures} == {kind.key.split("/")[1]}, (kind.key, verdict.failures)
    assert len(outcome.fixtures) == len(outcome.kinds)
    assert f"FAILED ({len(outcome.kinds)} kinds)" in rep.format_summary(report.outcomes)


def test_a_warning_keeps_its_input_and_fixture_and_strict_fails_on_it(tmp_path: Path) -> None:
    class Lenient:
        description = open_target("reference").description

        def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
            return {"messages": params["messages"]}

        def close(self) -> None:
            pass

    (outcome,) = run(Lenient(), [WARNS], tmp_path).outcomes
    assert outcome.status == "passed" and len(outcome.warned) == 1
    (kind,) = outcome.warned
    assert kind.params["messages"] and kind.fixture is not None
    assert load_fixture(kind.fixture).severity == "warn"
    assert str(kind.fixture) in rep.format_warnings([outcome])
    (strict,) = run(Lenient(), [WARNS], tmp_path, strict=True).outcomes
    assert strict.status == "failed" and strict.kinds[0].params["messages"]


def test_the_deadline_and_max_failures_leave_the_rest_never_run(tmp_path: Path) -> None:
    report = run(open_target("reference"), [COUNT, SHAPE, EFFECTIVE], tmp_path, max_failures=1)
    assert [o.status for o in report.outcomes] == ["failed", "never-run", "never-run"]
    assert "max-failures" in report.stopped
    summary = rep.format_summary(report.outcomes)
    assert "2 never-run" in summary and "NEVER RUN" in summary
    root = ElementTree.fromstring(rep.junit_xml(report.outcomes, target_spec="reference"))
    assert root.get("skipped") == "2"
    late = run(open_target("reference"), [SHAPE, EFFECTIVE], tmp_path, deadline=0.0)
    assert [o.status for o in late.outcomes] == ["never-run", "never-run"] and "deadline" in late.stopped


def test_a_target_fault_is_reported_once_not_by_every_property(tmp_path: Path) -> None:
    target = open_target("python:tests.targets.faulty.raising")
    report = run(target, [SHAPE, attrs.evolve(SHAPE, id="toy.shape-again")], tmp_path)
    first, second = report.outcomes
    assert first.status == "failed" and first.kinds[0].key == "target-exception"
    assert second.status != "failed", second
