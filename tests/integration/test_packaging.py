"""One installed name: a user's own ``strategies`` or ``properties`` module never shadows ours.

The repository keeps ``strategies/`` and ``properties/`` at the top (the project's layout); they are
installed as ``ctxmodel.strategies`` and ``ctxmodel.properties`` so that nothing generic lands in a
user's site-packages (pytest's ``py.py`` shim is the cautionary tale).

The mapping is ``package-dir`` in pyproject.toml, not links in the tree: a checkout without symlink
support (``core.symlinks=false``, the Windows default) turns a link into a text file, and a wheel
built from it would lack both packages.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import ctxmodel.strategies

CTXMODEL = Path(sys.executable).with_name("ctxmodel")
ROOT = Path(__file__).resolve().parents[2]


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


def _setuptools() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table: dict[str, object] = config["tool"]["setuptools"]
    return table


def _package_dir() -> dict[str, str]:
    mapping = _setuptools()["package-dir"]
    assert isinstance(mapping, dict)
    return {str(k): str(v) for k, v in mapping.items()}


def _packages_on_disk() -> set[str]:
    """Every folder with an ``__init__.py`` under the package's root and under each mapped folder."""
    roots = {"ctxmodel": ROOT / "ctxmodel"} | {pkg: ROOT / folder for pkg, folder in _package_dir().items()}
    found: set[str] = set()
    for pkg, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            found.add(".".join((pkg, *rel.parts)))
    return found


def test_the_repository_tracks_no_symlinks() -> None:
    listed = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in listed.splitlines() if line.startswith("120000 ")]
    assert not links, f"symlinks tracked (a checkout without symlink support gets text files): {links}"


def test_the_top_level_folders_map_into_ctxmodel() -> None:
    assert _package_dir() == {"ctxmodel.strategies": "strategies", "ctxmodel.properties": "properties"}


def test_the_package_list_names_every_package_folder() -> None:
    """The list is explicit (a mapped folder is not found by discovery), so a new sub-package must be
    added to it; one left out would be missing from the wheel while the editable install still had it."""
    packages = _setuptools()["packages"]
    assert isinstance(packages, list)
    assert sorted(packages) == sorted(_packages_on_disk())


@pytest.mark.parametrize("name", ["ctxmodel.strategies", "ctxmodel.properties"])
def test_the_mapped_packages_import_from_their_folders(name: str) -> None:
    module = importlib.import_module(name)
    folder = _package_dir()[name]
    assert module.__file__ is not None
    assert Path(module.__file__).resolve() == (ROOT / folder / "__init__.py").resolve()


def test_the_mapped_packages_import_outside_the_repository(tmp_path: Path) -> None:
    """From another directory the repository is not on ``sys.path``: only the install maps them."""
    code = "import ctxmodel.strategies, ctxmodel.properties.registry as r; print(len(r.all_properties()))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0


@pytest.mark.slow
def test_a_wheel_from_a_checkout_without_symlinks_holds_both_packages(tmp_path: Path) -> None:
    """Builds from the committed tree (a clone of HEAD), as a user without symlink support would."""
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "-c", "core.symlinks=false", "clone", "--quiet", str(ROOT), str(clone)],
        check=True,
        capture_output=True,
    )
    out = tmp_path / "wheel"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(clone), "--no-deps", "--quiet", "-w", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = out.glob("ctxmodel-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg, folder in _package_dir().items():
        expected = {f"{pkg.replace('.', '/')}/{p.name}" for p in (clone / folder).glob("*.py")}
        assert f"{pkg.replace('.', '/')}/__init__.py" in expected
        assert expected <= names, sorted(expected - names)
    assert {
        "ctxmodel/py.typed",
        "ctxmodel/targetkit/js/ctxmodel-target.cjs",
        "ctxmodel/targetkit/python/ctxmodel_target.py",
    } <= names
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"ctxmodel"}
