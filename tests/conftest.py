"""Hypothesis settings for the project's own tests: bounded, no deadline (shared 2-core machines)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ctxmodel.hypothesis_hooks import without_local_constants as _without_local_constants
from tests.tier_budgets import TierBudgets, read_budgets

settings.register_profile(
    "tests",
    max_examples=int(os.environ.get("CTXMODEL_TEST_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "tests"))


@pytest.fixture(autouse=True)
def _no_mined_constants(request: pytest.FixtureRequest) -> Iterator[None]:
    """Hypothesis mixes in literals mined from every loaded local module, so a derandomized test drew
    other examples depending on which test files were collected or ran before it (a share test passed
    alone and failed in the full suite). Every test runs with that pool empty, as the gate does."""
    if request.node.get_closest_marker("mined_constants"):
        yield
        return
    with _without_local_constants():
        yield


@pytest.fixture(scope="session")
def warm_storage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hypothesis storage folder holding only its character tables, to copy into a run's own fresh
    one: computing them costs every fresh folder seconds (minutes on a busy machine) before the first
    example is drawn."""
    import subprocess
    import sys

    warm = tmp_path_factory.mktemp("hypothesis-warm")
    subprocess.run([sys.executable, "-c", "from hypothesis.internal.charmap import intervals_from_codec as i; "
                    "i('utf-8')"], env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(warm)}, check=True,
                   timeout=600)
    return warm


@pytest.fixture
def fresh_storage(tmp_path: Path, warm_storage: Path) -> Path:
    """A Hypothesis storage folder of this test's own (no example database of another run), warm."""
    import shutil

    folder = tmp_path / "hypothesis"
    shutil.copytree(warm_storage, folder)
    return folder


def pytest_configure(config: pytest.Config) -> None:
    """Each tier's time budget (pyproject's ``[tool.ctxmodel.tier-budgets]``), judged at the session's end."""
    budgets = read_budgets(config.rootpath / "pyproject.toml")
    if budgets:
        config.pluginmanager.register(TierBudgets(budgets), "ctxmodel-tier-budgets")
