"""``ctxmodel target-kit`` and ``ctxmodel init-target --lang js``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.targetkit import kit_dir, kit_file

REPO = Path(__file__).resolve().parents[2]
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def ctxmodel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxmodel", *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


def ask(script: Path, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run(["node", str(script)], input=lines, capture_output=True, text=True, timeout=30, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_target_kit_path() -> None:
    proc = ctxmodel("target-kit", "--path")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == kit_dir()
    assert {p.name for p in kit_dir().iterdir()} >= {"ctxmodel-target.cjs", "ctxmodel-target.mjs"}
    proc = ctxmodel("target-kit", "--path", "--module", "esm")
    assert Path(proc.stdout.strip()) == kit_file("esm")


def test_target_kit_says_how_to_load_it() -> None:
    proc = ctxmodel("target-kit")
    assert proc.returncode == 0
    assert f"require({json.dumps(str(kit_file('cjs')))})" in proc.stdout
    assert kit_file("esm").as_uri() in proc.stdout
    assert "init-target" in proc.stdout


def test_the_kit_and_the_starter_are_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["ctxmodel"]
    shipped = {p.relative_to(REPO / "ctxmodel") for p in (REPO / "ctxmodel" / "targetkit").rglob("*") if p.is_file()}
    data = {p for p in shipped if p.suffix not in (".py", ".pyc")}  # bytecode is the interpreter's, not data
    assert data, "the kit has files"
    assert all(any(p.match(pattern) for pattern in patterns) for p in data), (data, patterns)


@needs_node
@pytest.mark.parametrize("flavour", ["cjs", "esm"])
def test_init_target_writes_a_runnable_starter(tmp_path: Path, flavour: str) -> None:
    where = tmp_path / "my-agent"
    proc = ctxmodel("init-target", "--lang", "js", "--dir", str(where), "--module", flavour)
    assert proc.returncode == 0, proc.stderr
    script = where / ("target.mjs" if flavour == "esm" else "target.cjs")
    assert sorted(p.name for p in where.iterdir()) == sorted(
        [script.name, "ctxmodel-target.cjs", "ctxmodel-target.mjs"]
    )
    assert "ctxmodel check --target" in proc.stdout
    assert (where / "ctxmodel-target.cjs").read_bytes() == kit_file("cjs").read_bytes()
    history = [{"role": "user", "content": "hi"}]
    params = {"messages": history, "contextWindow": 1000, "maxTokens": 100, "systemPrompt": "", "totalTokens": 5}
    describe, effective, recover, count = ask(
        script,
        {"id": 1, "op": "describe", "params": {}},
        {"id": 2, "op": "effective", "params": {"messages": history}},
        {"id": 3, "op": "recover", "params": params},
        {"id": 4, "op": "count", "params": {"messages": history}},
    )
    assert describe["result"]["name"] == "my-agent"
    assert describe["result"]["ops"] == ["describe", "effective", "normalize", "request", "recover", "count"]
    assert describe["result"]["tokenizer"] == "o200k_base"
    assert effective["result"] == {"messages": history}
    assert recover["result"]["messages"] == history
    assert recover["result"]["error"].startswith("Context window recovery failed")
    assert isinstance(count["result"]["tokens"], int)


@needs_node
def test_init_target_can_load_the_installed_kit(tmp_path: Path) -> None:
    proc = ctxmodel("init-target", "--lang", "js", "--dir", str(tmp_path), "--no-copy-kit", "--name", "x")
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["target.cjs"]
    assert str(kit_file("cjs")) in (tmp_path / "target.cjs").read_text()
    (reply,) = ask(tmp_path / "target.cjs", {"id": 1, "op": "describe", "params": {}})
    assert reply["result"]["name"] == "x"


def test_init_target_never_overwrites_without_force(tmp_path: Path) -> None:
    assert ctxmodel("init-target", "--lang", "js", "--dir", str(tmp_path)).returncode == 0
    (tmp_path / "target.cjs").write_text("// mine\n")
    proc = ctxmodel("init-target", "--lang", "js", "--dir", str(tmp_path))
    assert proc.returncode == 2
    assert "exists (use --force to overwrite)" in proc.stderr
    assert (tmp_path / "target.cjs").read_text() == "// mine\n"
    # --kit-only refreshes the copy of the kit and leaves the adapter alone.
    (tmp_path / "ctxmodel-target.cjs").write_text("// old kit\n")
    assert ctxmodel("init-target", "--lang", "js", "--dir", str(tmp_path), "--kit-only").returncode == 0
    assert (tmp_path / "ctxmodel-target.cjs").read_bytes() == kit_file("cjs").read_bytes()
    assert (tmp_path / "target.cjs").read_text() == "// mine\n"
    assert ctxmodel("init-target", "--lang", "js", "--dir", str(tmp_path), "--force").returncode == 0
    assert "kit.serve(" in (tmp_path / "target.cjs").read_text()


def test_init_target_knows_only_js(tmp_path: Path) -> None:
    proc = ctxmodel("init-target", "--lang", "python", "--dir", str(tmp_path))
    assert proc.returncode == 2
    assert "'js'" in proc.stderr
