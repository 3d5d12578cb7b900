"""One installed name: a user's own ``strategies`` or ``properties`` module never shadows ours.

The repository keeps ``strategies/`` and ``properties/`` at the top (the project's layout); they are
installed as ``ctxmodel.strategies`` and ``ctxmodel.properties`` so that nothing generic lands in a
user's site-packages (pytest's ``py.py`` shim is the cautionary tale).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxmodel.strategies

CTXMODEL = Path(sys.executable).with_name("ctxmodel")


def _scratch(tmp_path: Path) -> Path:
    (tmp_path / "strategies.py").write_text("raise ImportError('the user project strategies module was imported')\n")
    (tmp_path / "properties.py").write_text("raise ImportError('the user project properties module was imported')\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "strategies.py").write_text("X = 1\n")
    (tmp_path / "tests" / "__init__.py").write_text("")
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def test_the_public_strategies_are_exactly_all() -> None:
    public = {n for n in dir(ctxmodel.strategies) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(ctxmodel.strategies, n)).__name__ == "module"}
    assert set(ctxmodel.strategies.__all__) == public - modules - {"annotations"}


@pytest.mark.slow
def test_check_runs_from_a_project_with_its_own_strategies_module(tmp_path: Path) -> None:
    project = _scratch(tmp_path)
    proc = subprocess.run(
        [str(CTXMODEL), "check", "--target", "reference", "--max-examples", "5", "--fixtures", str(tmp_path / "fx")],
        cwd=project, capture_output=True, text=True, env=_env(), timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout


@pytest.mark.slow
def test_the_pytest_plugin_runs_from_a_project_with_its_own_properties_module(tmp_path: Path) -> None:
    project = _scratch(tmp_path)
    (project / "tests" / "test_gate.py").write_text("")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--ctxmodel-target", "reference",
         "--ctxmodel-max-examples", "5", "--rootdir", str(project), "tests"],
        cwd=project, capture_output=True, text=True, env=_env(), timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "36 passed" in proc.stdout or any(f"{n} passed" in proc.stdout for n in range(30, 200)), proc.stdout[-500:]
