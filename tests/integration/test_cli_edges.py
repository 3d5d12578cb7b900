"""Command-line edges: recover's usage errors and defaults, progress on big files,
files written with the user's umask, ``exec:VAR=x cmd``."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxmodel.cli import _files, main
from ctxmodel.fixtures import write_atomic
from ctxmodel.targets.process import command_argv
from ctxmodel.targets.spec import parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLEAN = EXAMPLES / "clean-session.json"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.mark.parametrize("window", ["0", "-5"])
def test_a_context_window_of_zero_or_less_is_a_usage_error(window: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["recover", str(CLEAN), "--context-window", window], capsys)
    assert code == 2 and out == ""
    assert "Invalid value for '--context-window'" in err and "x>=1" in err
    assert "Context window recovery failed" not in err


def test_max_tokens_defaults_to_the_agents_reserve(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["recover", str(CLEAN), "--context-window", "200000"], capsys)
    assert code == 0
    assert "(allowed: 171808 = floor(0.9 * 200000) - 8192;" in out
    assert run(["recover", "--help"], capsys)[1].count("8192") >= 2


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_files_are_written_with_the_users_umask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _mode(write_atomic(tmp_path / "fixture.json", {"a": 1})) == 0o644
    out = tmp_path / "normalized.json"
    assert run(["normalize", str(EXAMPLES / "duplicate-results.json"), "-o", str(out)], capsys)[0] == 0
    assert _mode(out) == 0o644
    repaired = tmp_path / "repaired.json"
    assert run(["repair", str(EXAMPLES / "duplicate-results.json"), "-o", str(repaired)], capsys)[0] == 0
    assert _mode(repaired) == 0o644
    recovered = tmp_path / "recovered.json"
    assert run(["recover", str(CLEAN), "--context-window", "200000", "-o", str(recovered)], capsys)[0] == 0
    assert _mode(recovered) == 0o644


@pytest.mark.usefixtures("umask_022")
def test_repair_in_place_keeps_the_files_own_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.json"
    path.write_bytes((EXAMPLES / "missing-parallel-result.json").read_bytes())
    path.chmod(0o600)
    assert run(["repair", str(path), "--in-place"], capsys)[0] == 0
    assert _mode(path) == 0o600 and _mode(Path(f"{path}.bak")) == 0o600


def test_progress_on_a_big_file(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_files, "BIG_FILE_BYTES", 1)
    monkeypatch.setattr(_files, "LOG_EVERY", 0.0)
    code, out, err = run(["count", str(CLEAN)], capsys)
    assert code == 0 and "counting" not in out
    lines = err.splitlines()
    assert lines[0].startswith(f"{CLEAN}: reading 0.0 MB")
    assert any(line.startswith("counting tokens (messages): ") and "%" in line for line in lines)
    assert lines[-1].startswith("counting tokens (messages): done (10) in ")
    code, out, err = run(["recover", str(CLEAN), "--context-window", "3000", "--max-tokens", "1000"], capsys)
    assert code == 0 and "recovering" not in out
    assert err.splitlines()[-1].startswith("recovering (tokens of the blocks counted): done (")


def test_no_progress_on_a_small_file_in_a_log(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["count", str(CLEAN)], capsys)
    assert code == 0 and err == ""


def test_an_environment_assignment_before_an_exec_command_runs_through_env() -> None:
    spec = parse_spec('exec:CTXMODEL_FLAG=1 node examples/targets/node/target.js')
    assert spec.value == "env CTXMODEL_FLAG=1 node examples/targets/node/target.js"
    assert command_argv(spec.value)[:2] == ["env", "CTXMODEL_FLAG=1"]
    assert parse_spec("exec:node x.js").value == "node x.js"


def test_an_exec_target_with_an_assignment_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``exec:"VAR=x cmd"`` reaches the target with VAR set (here a Python target that checks it)."""
    import sys

    script = tmp_path / "target.py"
    script.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    assert os.environ['CTXMODEL_FLAG'] == 'on'\n"
        "    res = {'protocol': 1, 'name': 'env-check', 'version': '1', 'ops': ['describe']}\n"
        "    print(json.dumps({'id': req['id'], 'result': res}), flush=True)\n"
    )
    from ctxmodel.targets.spec import open_target

    target = open_target(f"exec:CTXMODEL_FLAG=on {sys.executable} {script}")
    try:
        assert json.dumps(target.description.name) == '"env-check"'
    finally:
        target.close()
