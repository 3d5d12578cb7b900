"""``python:`` targets run in a worker process (contract §7, §9: never green by accident).

Whatever the op does — ``sys.exit`` with any status, ``os._exit``, ``KeyboardInterrupt``, an
endless loop, printing to stdout — it fails that input and the gate goes on; the request
timeout applies as it does to ``exec:`` targets; a mutation of the params still shows.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from ctxmodel.targets import TargetFailure, open_target
from ctxmodel.targets.python import PythonTarget, PythonWorkerTarget

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVES = "python:tests.targets.faulty.misbehaves"
ONE = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def worker() -> Any:
    target = open_target(MISBEHAVES, timeout=0.5)
    yield target
    target.close()


def _params(do: str | None, **extra: Any) -> dict[str, Any]:
    return {"messages": [dict(m) for m in ONE], "do": do, **extra}


def test_python_targets_run_in_a_worker_unless_asked_in_process() -> None:
    worker = open_target(MISBEHAVES)
    try:
        assert isinstance(worker, PythonWorkerTarget)
        assert worker.description.name == "faulty-misbehaves"
        assert worker.call("normalize", _params(None)) == {"messages": ONE}
    finally:
        worker.close()
    assert isinstance(open_target(MISBEHAVES, in_process=True), PythonTarget)


@pytest.mark.parametrize(
    ("do", "message"),
    [
        ("exit3", "the target exited with status 3 while answering normalize (SystemExit: 3 (at "),
        ("exit-message", "the target exited with status 1 while answering normalize (SystemExit: bye"),
        ("os-exit", "the target exited with status 0 while answering normalize"),
        ("interrupt", "the target raised KeyboardInterrupt while answering normalize"),
    ],
)
def test_exits_and_interrupts_fail_the_input_and_the_target_goes_on(worker: Any, do: str, message: str) -> None:
    with pytest.raises(TargetFailure) as caught:
        worker.call("normalize", _params(do))
    assert caught.value.kind == "crash"
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert worker.call("normalize", _params(None)) == {"messages": ONE}  # restarted if it had to be


def test_sys_exit_0_does_not_cost_a_restart(worker: Any) -> None:
    before = worker.restarts
    with pytest.raises(TargetFailure, match="exited with status 0 while answering normalize"):
        open_target("python:tests.targets.faulty.exits").call("normalize", {"messages": ONE * 2})
    for _ in range(3):
        with pytest.raises(TargetFailure, match="status 3"):
            worker.call("normalize", _params("exit3"))
    assert worker.restarts == before


def test_printing_to_stdout_does_not_break_the_protocol(worker: Any) -> None:
    assert worker.call("normalize", _params("print")) == {"messages": ONE}
    assert worker.call("effective", _params("print")) == {"messages": ONE}


def test_a_hang_times_out_with_the_request_timeout_and_costs_no_restart(worker: Any) -> None:
    before = worker.restarts
    start = time.monotonic()
    with pytest.raises(TargetFailure, match=r"^timeout: normalize: no reply within 0.5 s \(interrupted\)$"):
        worker.call("normalize", _params("sleep"))
    with pytest.raises(TargetFailure, match=r"recover: no reply within 0\.5 s"):
        worker.call("recover", {"messages": ONE * 2, "contextWindow": 100000, "maxTokens": 10})
    assert time.monotonic() - start < 2.5
    assert worker.restarts == before  # interrupted in the worker, which goes on warm
    reply = worker.call("recover", {"messages": ONE, "contextWindow": 100000, "maxTokens": 10})
    assert reply["error"] is None  # a fresh request meets its own deadline, not a cold start


def test_a_hang_that_swallows_the_interrupt_is_killed(worker: Any) -> None:
    before = worker.restarts
    start = time.monotonic()
    with pytest.raises(TargetFailure, match=r"^timeout: normalize: no reply within 0.5 s \(target killed\)"):
        worker.call("normalize", _params("swallow"))
    assert time.monotonic() - start < 3.0
    assert worker.call("normalize", _params(None)) == {"messages": ONE}
    assert worker.restarts == before + 1


def test_a_mutation_is_reported_and_mirrored_into_the_params(worker: Any) -> None:
    params = _params("mutate")
    worker.call("normalize", params)
    # What an in-process call would have left in the caller's object, so TargetProbe.sent shows it.
    assert params["messages"] == [{"role": "user", "content": "changed"}, {"role": "user", "content": "extra"}]
    assert worker.last_mutated == ("messages.0.content", "messages.1")
    untouched = _params(None)
    worker.call("normalize", untouched)
    assert worker.last_mutated == () and untouched == _params(None)


def test_replies_are_checked_as_in_process() -> None:
    target = open_target("python:tests.integration.test_targets:_Mutating")
    try:
        assert target.description.ops == {"normalize", "effective", "count", "request"}
        with pytest.raises(TargetFailure, match="effective: expected a JSON object reply, got list") as info:
            target.call("effective", {"messages": ONE})
        assert info.value.kind == "protocol"
        with pytest.raises(TargetFailure, match="count: reply is not strict JSON") as info:
            target.call("count", {"messages": ONE})
        assert info.value.kind == "protocol"
        with pytest.raises(TargetFailure, match=r"request: KeyError: 'messages' \(at .*test_targets.py:\d+\)") as info:
            target.call("request", {})
        assert info.value.kind == "exception"
    finally:
        target.close()


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxmodel",
            "check",
            *args,
            "--profile",
            "ci",
            "--fixtures",
            str(tmp_path / "fx"),
            "--regressions",
            str(tmp_path / "none"),
            "--junit",
            str(tmp_path / "junit.xml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_sys_exit_0_in_normalize_fails_the_run_with_a_fixture_summary_and_junit(tmp_path: Path) -> None:
    run = _check(
        tmp_path,
        "--target",
        "python:tests.targets.faulty.exits",
        "--property",
        "normalize.idempotent",
        "--max-examples",
        "20",
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "the target exited with status 0 while answering normalize" in run.stdout
    fixtures = list((tmp_path / "fx").glob("*.json"))
    assert fixtures and "exited with status 0" in fixtures[0].read_text()
    assert "1 failed" in run.stdout and "seed 0" in run.stdout  # the summary and the seed
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert root.get("failures") == "1"


def test_an_endless_loop_in_recover_ends_within_its_timeout_as_a_timeout(tmp_path: Path) -> None:
    start = time.monotonic()
    run = _check(
        tmp_path,
        "--target",
        MISBEHAVES,
        "--property",
        "recover.within-budget-unchanged",
        "--max-examples",
        "5",
        "--timeout",
        "0.5",
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "recover: no reply within 0.5 s" in run.stdout
    fixtures = list((tmp_path / "fx").glob("*.json"))
    assert fixtures and "no reply within 0.5 s" in fixtures[0].read_text()
    assert '"messages": [' in fixtures[0].read_text()  # the input that loops
    assert "1 failed" in run.stdout and ElementTree.parse(tmp_path / "junit.xml").getroot().get("failures") == "1"
    assert time.monotonic() - start < 240
