"""The pytest plugin: one item per property through the gate, markers, exit codes, import cost."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = textwrap.dedent(
    """
    from hypothesis import strategies as st

    from ctxmodel.properties.catalogue import Finding, check


    def params(policies):
        message = st.just({"role": "user", "content": "a"})
        return st.fixed_dictionaries({"messages": st.lists(message, max_size=3)})


    def at_most_one(probe, ex):
        if len(ex.result["messages"]) > 1:
            yield Finding.fail("demo: more than one message", "at most one message")


    check("demo.at-most-one", op="normalize", clause="contract §7", summary="demo", params=params)(at_most_one)
    check("demo.needs-count", op="count", clause="contract §5", summary="demo", params=params)(at_most_one)
    """
)
TARGET = textwrap.dedent(
    """
    def describe(params):
        return {"protocol": 1, "name": "echo", "version": "1", "ops": ["describe", "normalize"]}


    def normalize(params):
        return {"messages": params["messages"]}
    """
)


def pytest_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "echo_target.py").write_text(TARGET)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--strict-markers", "-rs", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_properties_become_items_that_fail_with_the_gate_report(tmp_path: Path) -> None:
    run = pytest_run(
        tmp_path,
        "--ctxmodel-target",
        "python:echo_target",
        "--ctxmodel-property",
        "demo",
        "--ctxmodel-profile",
        "ci",
        "-m",
        "ctxmodel",
        "-v",
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "ctxmodel[python:echo_target]::demo.at-most-one FAILED" in run.stdout
    assert "ctxmodel[python:echo_target]::demo.needs-count SKIPPED" in run.stdout
    assert "target has no count" in run.stdout
    assert "found:    demo: more than one message" in run.stdout
    assert "Reproduce with: ctxmodel replay ctxmodel-fixtures/demo.at-most-one-" in run.stdout
    fixtures = list((tmp_path / "ctxmodel-fixtures").glob("demo.at-most-one-*.json"))
    assert len(fixtures) == 1
    assert '"content": "a"' in fixtures[0].read_text()


def test_no_target_no_items_and_bad_targets_exit_clearly(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    plain = pytest_run(tmp_path)
    assert plain.returncode == 0 and "1 passed" in plain.stdout
    missing = pytest_run(tmp_path, "--ctxmodel-target", "exec:/no/such/binary", "--ctxmodel-property", "demo")
    assert missing.returncode == 3
    assert "ctxmodel: start: exec:/no/such/binary: cannot start: No such file" in missing.stdout + missing.stderr
    bad = pytest_run(tmp_path, "--ctxmodel-target", "bogus")
    assert bad.returncode == 4 and "expected reference, python:" in bad.stderr


def test_the_plugin_module_is_import_light() -> None:
    code = (
        "import sys, ctxmodel.pytest_plugin; "
        "heavy = [m for m in ('hypothesis', 'ctxmodel.gate', 'properties', 'click', 'tiktoken') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
