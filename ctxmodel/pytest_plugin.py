"""pytest plugin (``pytest11`` entry point ``ctxmodel``): the property gate inside a user's own CI run.

``pytest --ctxmodel-target SPEC`` adds one test item per selected property, run through the same
engine as ``ctxmodel check`` (one session, same shrinking, same fixtures, same report text). The
module is imported by every pytest run of every project that has ctxmodel installed, so it stays
import-light (Hypothesis's own plugin learned that its import cost every pytest run): nothing beyond
pytest at import time; the engine, Hypothesis and the target load only when ``--ctxmodel-target`` is
given. Options are prefixed
``--ctxmodel-`` and the ``ctxmodel`` marker is registered, so ``--strict-markers`` runs work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ctxmodel.engine import Session
    from ctxmodel.properties.catalogue import Property
    from ctxmodel.results import Outcome
    from ctxmodel.targets.base import Target

__all__ = ["PropertyFailure", "PropertyItem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxmodel", "ctxmodel property gate (contract §7-§9)")
    group.addoption(
        "--ctxmodel-target",
        default=None,
        metavar="SPEC",
        help="run the property suites against reference, python:pkg.mod[:obj] or exec:COMMAND",
    )
    group.addoption(
        "--ctxmodel-profile",
        default=None,
        metavar="NAME",
        help="ci, dev, thorough or replay (default: ci if $CI is set, else dev)",
    )
    group.addoption(
        "--ctxmodel-policy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a policy the target declares (repeatable)",
    )
    group.addoption(
        "--ctxmodel-property",
        action="append",
        default=[],
        metavar="ID",
        help="only this property id or prefix (repeatable)",
    )
    group.addoption(
        "--ctxmodel-ops",
        action="append",
        default=[],
        metavar="OPS",
        help="only properties of these ops (comma-separated, repeatable)",
    )
    group.addoption("--ctxmodel-max-examples", type=int, default=None, metavar="N", help="examples per property")
    group.addoption("--ctxmodel-seed", type=int, default=None, metavar="N", help="seed of the run")
    group.addoption("--ctxmodel-fixtures", default="ctxmodel-fixtures", metavar="DIR", help="where failures go")
    group.addoption(
        "--ctxmodel-regressions",
        default="regressions",
        metavar="DIR",
        help="promoted fixtures, run first as explicit examples",
    )
    group.addoption(
        "--ctxmodel-timeout", type=float, default=10.0, metavar="SECONDS", help="seconds per request (exec targets)"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ctxmodel: a ctxmodel property run against --ctxmodel-target")


class PropertyFailure(Exception):
    """A property that failed: its text is the gate's own report (fixture path and replay line)."""


class _Runner:
    """One target and one engine session per pytest session, opened on first use and closed at the
    end: the properties run as ``ctxmodel check`` runs them, one per test item."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.target: Target | None = None
        self.session: Session | None = None

    def open(self) -> Session:
        if self.session is None:
            from ctxmodel.engine import RunConfig, Session
            from ctxmodel.errors import CtxmodelError, TargetError
            from ctxmodel.fixtures import examples_by_property
            from ctxmodel.policies import parse_pairs, resolve
            from ctxmodel.profiles import default_profile, get_profile
            from ctxmodel.targets.spec import open_target

            opt = self.config.getoption
            try:
                target = open_target(opt("ctxmodel_target"), timeout=opt("ctxmodel_timeout"))
            except TargetError as exc:
                pytest.exit(f"ctxmodel: {exc}", returncode=3)
            try:
                overrides = parse_pairs(opt("ctxmodel_policy"), "--ctxmodel-policy")
                policies = resolve(target.description.policies, overrides)
                profile = get_profile(opt("ctxmodel_profile") or default_profile())
                regressions = examples_by_property(opt("ctxmodel_regressions"))
            except CtxmodelError as exc:
                target.close()
                pytest.exit(f"ctxmodel: {exc}", returncode=2)
            self.target = target
            run = RunConfig(
                policies=policies, profile=profile, fixtures_dir=opt("ctxmodel_fixtures"), seed=opt("ctxmodel_seed"),
                max_examples=opt("ctxmodel_max_examples"), regressions=regressions,
                target_spec=opt("ctxmodel_target"), timeout=opt("ctxmodel_timeout"),
            )
            self.session = Session(target, run)
        return self.session

    def run(self, prop: Property) -> Outcome:
        return self.open().run_one(prop)

    def close(self) -> None:
        if self.target is not None:
            self.target.close()
            self.target = None
            self.session = None


_RUNNER = pytest.StashKey[_Runner]()


class PropertyItem(pytest.Item):
    def __init__(self, *, prop: Property, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prop = prop
        self.add_marker("ctxmodel")

    def runtest(self) -> None:
        from ctxmodel import report

        outcome = self.config.stash[_RUNNER].run(self.prop)
        if outcome.warnings:
            self.add_report_section("call", "ctxmodel warnings", report.format_warnings([outcome]))
        if outcome.status in ("skipped", "never-run"):
            pytest.skip(outcome.reason)
        if outcome.status == "failed":
            raise PropertyFailure(report.format_failure(outcome, self.config.getoption("ctxmodel_target")))
        if outcome.status == "error":
            raise PropertyFailure(f"ERROR {self.prop.id}: {outcome.reason}")
        if outcome.status == "not-judged":
            raise PropertyFailure(f"NOT JUDGED {self.prop.id}: {outcome.reason}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, PropertyFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"ctxmodel property {self.prop.id} ({self.prop.clause})"


class _Suite(pytest.Collector):
    def collect(self) -> list[pytest.Item]:  # pragma: no cover - items are created directly
        return []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the property items before other plugins filter (``-k``, ``-m``, deselect) the list."""
    spec = config.getoption("ctxmodel_target", None)
    if not spec:
        return
    from ctxmodel.errors import CtxmodelError
    from ctxmodel.policies import split_csv
    from ctxmodel.properties.registry import select
    from ctxmodel.targets.spec import parse_spec

    try:
        parse_spec(spec)
        props = select(split_csv(config.getoption("ctxmodel_property")), split_csv(config.getoption("ctxmodel_ops")))
    except CtxmodelError as exc:
        raise pytest.UsageError(f"ctxmodel: {exc}") from None
    if not props:
        raise pytest.UsageError("ctxmodel: no property matches --ctxmodel-property/--ctxmodel-ops")
    config.stash[_RUNNER] = _Runner(config)
    suite = _Suite.from_parent(session, name=f"ctxmodel[{spec}]", nodeid=f"ctxmodel[{spec}]")
    items.extend(PropertyItem.from_parent(suite, name=prop.id, prop=prop) for prop in props)


def pytest_unconfigure(config: pytest.Config) -> None:
    runner = config.stash.get(_RUNNER, None)
    if runner is not None:
        runner.close()
