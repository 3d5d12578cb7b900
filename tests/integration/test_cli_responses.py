"""The history commands on OpenAI Responses files: a request body or a bare ``input`` array is
detected and said; ``validate`` names what the provider names; ``repair`` writes a request the
oracle accepts in the file's own shape, the body's other keys kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxmodel.cli import main
from ctxmodel.dialects.openai_responses import load, validate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "openai-responses"
SAID = "OpenAI Responses input, detected"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_a_request_body_is_read_by_its_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(EXAMPLES / "clean-reasoning-calls.json")], capsys)
    assert (code, out) == (0, "")
    assert 'reading its "input" (12 items; also model, store, include, instructions)' in err
    assert f"({SAID}): the API would accept its structure" in err


def test_reasoning_trimmed_away_from_its_item_fails_with_the_text_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(EXAMPLES / "reasoning-separated-by-trim.json")], capsys)
    assert code == 1
    assert out.splitlines()[-1] == (
        "input.1: Item 'rs_0a1f2c3d4e5f60718293a4b5c6d7e8fa' of type 'reasoning' was provided without its required "
        "following item.  [reasoning-without-following-item]")
    assert SAID in err


def test_repair_keeps_every_other_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = EXAMPLES / "reasoning-separated-by-trim.json"
    before = json.loads(source.read_text(encoding="utf-8"))
    out_file = tmp_path / "fixed.json"
    code, _, err = run(["repair", str(source), "-o", str(out_file)], capsys)
    assert code == 0
    assert "input.1: reasoning-without-following-item: reasoning item without its following item dropped" in err
    after = json.loads(out_file.read_text(encoding="utf-8"))
    assert after == before[:1] + before[2:]
    assert validate(load(after)) == []


def test_repair_of_a_body_writes_the_body_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.loads((EXAMPLES / "clean-reasoning-calls.json").read_text(encoding="utf-8"))
    del body["input"][5]  # the second parallel call's output
    source = tmp_path / "body.json"
    source.write_text(json.dumps(body, indent=2), encoding="utf-8")
    code, _, err = run(["repair", str(source), "-o", str(tmp_path / "out.json")], capsys)
    assert code == 0, err
    fixed = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in fixed.items() if k != "input"} == {k: v for k, v in body.items() if k != "input"}
    assert validate(load(fixed["input"])) == []
    assert len(fixed["input"]) == len(body["input"]) + 1


def test_show_marks_what_the_oracle_points_at(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", "--show", str(EXAMPLES / "unanswered-parallel-call.json")], capsys)
    assert code == 1
    assert any(line.startswith(">> #2 ") and " call " in line for line in out.splitlines())


def test_the_guides_responses_trimmer_is_gated_in_one_command(tmp_path: Path) -> None:
    """docs/gating-python-libraries.md's own trimmer of Responses items passes every trim property."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(EXAMPLES), HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "db"))
    done = subprocess.run(
        [sys.executable, "-m", "ctxmodel", "check", "--target", "python:my_window", "--ops", "trim,count",
         "--profile", "ci", "--max-examples", "15", "--fixtures", str(tmp_path / "fx")],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "trim.reasoning-travels" in done.stdout and "trim.accepted" in done.stdout
