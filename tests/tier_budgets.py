"""A time budget per test tier, enforced at the end of the session (the tiers are the folders of ``tests/``).

A tier that grows past its budget fails the run with one line, so a slow test is moved to the slow
tier (``-m slow``) or made faster when it lands, not when the whole suite has crept past what CI can
wait for. Each test's wall seconds (setup, call and teardown) count towards the folder it lives in;
under xdist the controller sees every worker's reports, so the sums cover the whole run. No test
asserts a time: the budgets judge the suite, never one test's result.
"""

from __future__ import annotations

import tomllib
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pytest

#: The key a test marked ``slow`` counts under, whatever its folder: the slow tier has one budget.
SLOW = "slow"
#: Where the budgets are read from, in the repository's pyproject.toml.
TABLE = "[tool.ctxmodel.tier-budgets]"
#: A test in no tier's folder (a file straight under ``tests/``): shown, never over a budget.
UNPLACED = "unplaced"


def read_budgets(pyproject: Path) -> dict[str, float]:
    """The budgets in seconds by tier; none when the file or its table is absent."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("ctxmodel", {}).get("tier-budgets", {})
    return {str(k): float(v) for k, v in table.items()}


def tier_of(nodeid: str, tiers: Mapping[str, object]) -> str | None:
    """The first folder of a test's path that names a tier (``tests/unit/test_x.py`` -> ``unit``)."""
    for part in nodeid.split("::", 1)[0].split("/")[:-1]:
        if part in tiers:
            return part
    return None


class TierBudgets:
    """Sums the seconds of each tier's tests and fails the session when a tier is over its budget."""

    def __init__(self, budgets: Mapping[str, float], source: str = TABLE) -> None:
        self.budgets = dict(budgets)
        self.source = source
        self.spent: dict[str, float] = defaultdict(float)
        self.over: list[str] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tier = SLOW if SLOW in report.keywords else tier_of(report.nodeid, self.budgets)
        self.spent[tier or UNPLACED] += report.duration

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):  # an xdist worker: the controller judges the whole run
            return
        self.over = [
            f"tier budget exceeded: {tier} took {self.spent[tier]:.1f} s of test time, "
            f"over its budget of {budget:g} s ({self.source})"
            for tier, budget in self.budgets.items()
            if self.spent.get(tier, 0.0) > budget
        ]
        if self.over and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(terminalreporter.config, "workerinput") or not self.spent:
            return
        spent = ", ".join(
            f"{tier} {self.spent[tier]:.0f}/{self.budgets[tier]:g} s" if tier in self.budgets else
            f"{tier} {self.spent[tier]:.0f} s"
            for tier in sorted(self.spent)
        )
        terminalreporter.write_line(f"tier test time (spent/budget): {spent}")
        for line in self.over:
            terminalreporter.write_line(line, red=True, bold=True)
