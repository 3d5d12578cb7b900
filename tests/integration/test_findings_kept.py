"""Nothing found is lost: an interrupt or SIGTERM at any point (a shrink included) leaves every kind
met as a fixture, the summary, the seed and the JUnit file; the deadline bounds the whole run; an
output that cannot be written is said at the start."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from ctxmodel.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CTXMODEL = [sys.executable, "-m", "ctxmodel"]
#: A normalize whose every reply fails ``normalize.results-lead`` and whose shrink is slow (each call
#: sleeps): a signal sent once the kind is met lands in the shrink.
SLOW_BUG = "python:tests.targets.slow_bug:SlowImagesFirst"


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CTXMODEL, "check", "--target", SLOW_BUG, "--profile", "ci", "--seed", "0",
         "--property", "normalize.results-lead", "--fixtures", str(tmp_path / "fx"), "--regressions",
         str(tmp_path / "none"), "--junit", str(tmp_path / "junit.xml"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp")},
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    """A child that can be interrupted, whatever this process inherited (a job started with ``&``
    in a script ignores SIGINT, and so would every process it starts)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _storage(tmp_path: Path, warm: Path) -> None:
    shutil.copytree(warm, tmp_path / "hyp")


def _wait_for_a_fixture(directory: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if list(directory.glob("*.json")):
            return
        time.sleep(0.05)
    raise AssertionError("no fixture was written while the kind was being shrunk")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_the_shrink_keeps_the_kind_the_summary_and_junit(
    tmp_path: Path, signum: int, code: int, warm_storage: Path
) -> None:
    _storage(tmp_path, warm_storage)
    proc = _start(tmp_path)
    _wait_for_a_fixture(tmp_path / "fx", proc)
    os.killpg(proc.pid, signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, (proc.returncode, out[-2000:], err[-2000:])
    assert "Traceback" not in err, err
    fixtures = list((tmp_path / "fx").glob("*.json"))
    assert len(fixtures) == 1, fixtures
    assert json.loads(fixtures[0].read_text())["kind"].startswith("normalize.results-lead/")
    assert "the run stopped early: interrupted" in out and "seed 0" in out
    assert "FAILED" in out.split("property")[-1]
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert root.get("failures") == "1"


def test_the_deadline_bounds_the_shrink_and_keeps_what_it_found(tmp_path: Path, warm_storage: Path) -> None:
    _storage(tmp_path, warm_storage)
    started = time.monotonic()
    proc = _start(tmp_path, "--deadline", "3")
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - started < 30, out  # the shrink alone takes minutes
    assert proc.returncode == 1, (out[-2000:], err[-2000:])
    assert "the run's deadline passed after" in out, out
    assert len(list((tmp_path / "fx").glob("*.json"))) == 1


def test_a_deadline_that_leaves_nothing_judged_does_not_pass(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--target", "reference", "--profile", "ci", "--deadline", "0",
                                      "--fixtures", str(tmp_path / "fx"), "--ops", "count"],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "the run judged nothing" in result.output


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_fixtures_folder_is_said_at_the_start(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        result = CliRunner().invoke(cli, ["check", "--target", "reference", "--fixtures", str(folder / "fx")])
    finally:
        folder.chmod(0o700)
    assert result.exit_code == 2 and "--fixtures" in result.output and "cannot write" in result.output


def test_a_fixtures_path_that_is_a_file_is_said_at_the_start(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for option in ("--fixtures", "--junit"):
        path = tmp_path / "file" / "inside"
        result = CliRunner().invoke(cli, ["check", "--target", "reference", option, str(path)])
        assert result.exit_code == 2, result.output
        assert f"ctxmodel: {option} {path}: cannot write there" in result.output


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(value: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--target", "reference", "--timeout", value])
    assert result.exit_code == 2 and f"--timeout {float(value)}" in result.output


def test_a_target_that_cannot_start_still_gets_its_junit(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(cli, ["check", "--target", "exec:/nonexistent/agent", "--junit", str(junit)])
    assert result.exit_code == 3, result.output
    root = ElementTree.parse(junit).getroot()
    assert root.get("errors") == "1" and root.find("testcase/error") is not None


def test_a_shrunk_timeout_still_times_out_under_the_run_s_timeout(tmp_path: Path) -> None:
    """The shrink judges under the run's own timeout, a restart not counted against the input, and
    what it keeps times out again when replayed: a finding, not an input that answers at once."""
    import shlex

    import attrs
    from hypothesis import strategies as st

    from ctxmodel import engine
    from ctxmodel.engine import RunConfig
    from ctxmodel.fixtures import load_fixture
    from ctxmodel.gate import replay
    from ctxmodel.profiles import get_profile
    from ctxmodel.results import finding_key
    from ctxmodel.targets import open_target
    from tests.integration.test_gate import FAULTY, SHAPE

    tiny = attrs.evolve(SHAPE, params=lambda _: st.integers(0, 8).map(
        lambda n: {"messages": [{"role": "user", "content": "a"}] * n}))
    spec = f"exec:{shlex.quote(sys.executable)} -S {shlex.quote(str(FAULTY / 'slow_start.py'))}"
    target = open_target(spec, timeout=0.8)
    try:
        config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "fx", seed=0, max_examples=30,
                           database=None, policies=target.description.policies)
        (outcome,) = engine.run([tiny], config, target=target).outcomes
        [kind] = outcome.kinds
        assert kind.key == "target-timeout"
        assert len(kind.params["messages"]) == 3, kind.params  # the first length that hangs
        assert kind.fixture is not None
        target.call("describe", {})  # started, as a replay in CI would find it
        again = replay(load_fixture(kind.fixture), target, resolve=lambda _: tiny)
        assert [finding_key(tiny, f) for f in again.failures] == ["target-timeout"]
    finally:
        target.close()


@pytest.mark.parametrize("option", ["--report", "--fixtures", "--db"])
def test_a_fuzz_output_that_cannot_be_written_is_said_at_the_start(tmp_path: Path, option: str) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "inside"
    result = CliRunner().invoke(cli, ["fuzz", "--target", "reference", "--max-examples", "1", option, str(path)])
    assert result.exit_code == 2, result.output
    assert f"ctxmodel: {option} {path}: cannot write there" in result.output


def _start_jobs(tmp_path: Path) -> subprocess.Popen[str]:
    """The slow bug at ``--jobs 2``, its workers' scratch directories under ``tmp_path/tmp``."""
    (tmp_path / "tmp").mkdir()
    return subprocess.Popen(
        [*CTXMODEL, "check", "--target", SLOW_BUG, "--profile", "ci", "--seed", "0", "--jobs", "2",
         "--property", "normalize.results-lead", "--fixtures", str(tmp_path / "fx"), "--regressions",
         str(tmp_path / "none")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hyp"),
             "TMPDIR": str(tmp_path / "tmp")},
        preexec_fn=_default_sigint,
    )


def _wait_for_a_worker_fixture(tmp_path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if list((tmp_path / "tmp").glob("ctxmodel-job-*/*.json")):
            return
        time.sleep(0.05)
    raise AssertionError("no worker wrote a fixture while the kind was being shrunk")


def _workers(pid: int) -> list[int]:
    """The run's worker processes (its direct children, the resource tracker aside)."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
    workers = []
    for child in map(int, out.split()):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"resource_tracker" not in cmdline:
            workers.append(child)
    return workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, /proc")
def test_an_interrupt_at_two_jobs_keeps_the_kind_a_worker_was_shrinking(tmp_path: Path, warm_storage: Path) -> None:
    _storage(tmp_path, warm_storage)
    proc = _start_jobs(tmp_path)
    _wait_for_a_worker_fixture(tmp_path, proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    fixtures = list((tmp_path / "fx").glob("*.json"))
    assert len(fixtures) == 1, (fixtures, out)
    assert json.loads(fixtures[0].read_text())["property"] == "normalize.results-lead"
    assert "its unshrunk fixtures kept" in out, out
    assert not list((tmp_path / "tmp").glob("ctxmodel-job-*")), "a scratch directory was left behind"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, /proc")
def test_a_worker_killed_in_the_shrink_leaves_its_unshrunk_fixture(tmp_path: Path, warm_storage: Path) -> None:
    _storage(tmp_path, warm_storage)
    proc = _start_jobs(tmp_path)
    _wait_for_a_worker_fixture(tmp_path, proc)
    for worker in _workers(proc.pid):
        os.kill(worker, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (proc.returncode, out[-2000:], err[-2000:])
    fixtures = list((tmp_path / "fx").glob("*.json"))
    assert len(fixtures) == 1, (fixtures, out)
    assert "its worker process ended (exit code -9); its unshrunk fixtures kept" in out, out


def test_a_hang_s_shrink_stops_after_its_budget_of_timed_out_steps(tmp_path: Path) -> None:
    """Each shrink step that hangs costs a whole timeout and a restart: the shrink stops after
    ``TIMEOUT_SHRINK_STEPS`` of them (a recover request that hangs on every input took 105 without
    the budget), keeping the smallest hanging input it reached as the fixture."""
    from ctxmodel import engine
    from ctxmodel.engine import RunConfig
    from ctxmodel.gate import TIMEOUT_SHRINK_STEPS
    from ctxmodel.profiles import get_profile
    from ctxmodel.properties.registry import get
    from ctxmodel.targets import Description, TargetFailure

    class Hangs:
        """A recover that never answers, as a process target reports it (the wait itself left out)."""

        description = Description(name="hangs", version="1", ops=frozenset({"describe", "recover"}))
        timeout = 0.01

        def call(self, op: str, params: dict[str, object]) -> dict[str, object]:
            raise TargetFailure("timeout", f"no reply within {self.timeout:g} s (target killed)")

        def close(self) -> None:
            pass

    target = Hangs()
    config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "fx", seed=0, max_examples=5,
                       database=None, policies=target.description.policies)
    (outcome,) = engine.run([get("recover.within-budget-unchanged")], config, target=target).outcomes
    (kind,) = outcome.kinds
    assert kind.key == "target-timeout" and kind.fixture is not None and kind.fixture.exists()
    assert outcome.shrink_steps <= TIMEOUT_SHRINK_STEPS + 1, outcome.shrink_steps
    assert "messages" in kind.params
