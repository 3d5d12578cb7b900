"""``examples/targets/install.py``: a library that names a Python this machine lacks stops with one
line saying which and how to get it, before anything is made."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

INSTALL = Path(__file__).resolve().parents[2] / "examples" / "targets" / "install.py"


def _install() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ctxmodel_install_script", INSTALL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_interpreter_is_one_line_naming_the_version() -> None:
    install = _install()
    with pytest.raises(install.NoInterpreter) as raised:
        install.interpreter("1.9")
    said = str(raised.value)
    assert "\n" not in said and "Python 1.9" in said and "python1.9" in said


def test_the_running_interpreter_is_found_by_its_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    install = _install()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    link = tmp_path / f"python{version}"
    link.symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert install.interpreter(version) == str(link)
