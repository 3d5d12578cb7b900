"""The tier budgets: each folder's test seconds summed, one line and a failed session when a tier is
over its budget, and nothing said against a tier within it (``tests/tier_budgets.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tier_budgets import TierBudgets, read_budgets, tier_of

pytest_plugins = ("pytester",)

PASSING = "def test_passes():\n    assert 1 + 1 == 2\n"


def _project(pytester: pytest.Pytester) -> None:
    for tier in ("unit", "quality"):
        pytester.mkpydir(tier)
        (pytester.path / tier / f"test_{tier}.py").write_text(PASSING)


def test_a_tier_over_its_budget_fails_the_session_with_one_line(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("-p", "no:xdist", plugins=[TierBudgets({"unit": 0.0, "quality": 3600.0})])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)
    over = [line for line in result.outlines if line.startswith("tier budget exceeded")]
    assert len(over) == 1
    assert over[0].startswith("tier budget exceeded: unit took ")
    assert over[0].endswith("over its budget of 0 s ([tool.ctxmodel.tier-budgets])")


def test_tiers_within_their_budgets_pass_and_say_what_they_spent(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("-p", "no:xdist", plugins=[TierBudgets({"unit": 3600.0, "quality": 3600.0})])
    assert result.ret == pytest.ExitCode.OK
    assert not [line for line in result.outlines if line.startswith("tier budget exceeded")]
    spent = [line for line in result.outlines if line.startswith("tier test time")]
    assert len(spent) == 1 and "quality " in spent[0] and "unit " in spent[0]


def test_a_failing_test_keeps_its_own_exit_status(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("unit")
    (pytester.path / "unit" / "test_fails.py").write_text("def test_fails():\n    assert False\n")
    result = pytester.runpytest("-p", "no:xdist", plugins=[TierBudgets({"unit": 0.0})])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)


def test_a_test_counts_in_its_folder_and_a_slow_test_in_the_slow_tier(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("unit")
    (pytester.path / "unit" / "test_slow.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n\ndef test_fast():\n    pass\n"
    )
    pytester.makeini("[pytest]\nmarkers =\n    slow: the slow tier\n")
    plugin = TierBudgets({"unit": 3600.0, "slow": 3600.0})
    result = pytester.runpytest("-p", "no:xdist", plugins=[plugin])
    assert result.ret == pytest.ExitCode.OK
    assert set(plugin.spent) == {"unit", "slow"}


def test_the_tier_is_the_first_folder_naming_one() -> None:
    tiers = {"unit": 1.0, "integration": 1.0}
    assert tier_of("tests/unit/test_codec.py::test_x", tiers) == "unit"
    assert tier_of("tests/integration/test_cli_gate.py::test_y[a/b]", tiers) == "integration"
    assert tier_of("tests/test_new.py::test_z", tiers) is None


def test_the_budgets_are_read_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ctxmodel.tier-budgets]\nunit = 60\nquality = 90.5\n")
    assert read_budgets(tmp_path / "pyproject.toml") == {"unit": 60.0, "quality": 90.5}
    assert read_budgets(tmp_path / "missing.toml") == {}
    repo = read_budgets(Path(__file__).resolve().parents[2] / "pyproject.toml")
    assert {"unit", "property", "integration", "quality"} <= set(repo)
