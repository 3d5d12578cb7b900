"""Long lists a person can read: a count per rule first, then the findings, ``--max N``,
``--format json`` for machines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.cli import main


def broken_pairs(n: int) -> list[dict[str, Any]]:
    """``n`` turns whose result sits after a text block and answers the wrong id: three findings each."""
    value: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(n):
        value.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "r",
                                                        "input": {}}]})
        value.append({"role": "user", "content": [{"type": "text", "text": "env"},
                                                  {"type": "tool_result", "tool_use_id": f"toolu_x{i}",
                                                   "content": "ok"}]})
    return value


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.fixture
def big(tmp_path: Path) -> Path:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(broken_pairs(40)))
    return path


def test_the_count_per_rule_comes_first_then_at_most_50_findings(big: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(big)], capsys)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "120 violations, by rule:"
    assert lines[1].split()[:2] == ["40", "missing-tool-result"]
    assert lines[2].split()[:2] == ["40", "tool-result-not-first"]
    assert lines[3].split()[:2] == ["40", "unexpected-tool-use-id"]
    findings = [line for line in lines[4:] if line.startswith("messages.")]
    assert len(findings) == 50
    assert lines[-1] == "... and 70 more (--max 0 lists them all, --format json too)"
    assert err.count("\n") == 1 and "120 violations" in err


def test_max(big: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["validate", "--max", "3", str(big)], capsys)
    assert len([line for line in out.splitlines() if line.startswith("messages.")]) == 3
    assert out.splitlines()[-1].startswith("... and 117 more")
    _, out, _ = run(["validate", "--max", "0", str(big)], capsys)
    assert len([line for line in out.splitlines() if line.startswith("messages.")]) == 120
    assert "more" not in out.splitlines()[-1]


def test_format_json(big: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", "--format", "json", str(big)], capsys)
    report = json.loads(out)
    assert code == 1 and report["accepted"] is False
    assert report["counts"] == {"missing-tool-result": 40, "tool-result-not-first": 40, "unexpected-tool-use-id": 40}
    assert len(report["violations"]) == 120 and report["more"] == 0
    first = report["violations"][0]
    assert first["rule"] == "missing-tool-result" and first["path"] == "messages.1" and first["ids"] == ["toolu_0"]
    assert first["message"].startswith("messages.1: `tool_use` ids were found without `tool_result` blocks")
    _, out, _ = run(["validate", "--format", "json", "--max", "2", str(big)], capsys)
    assert len(json.loads(out)["violations"]) == 2 and json.loads(out)["more"] == 118


def test_a_clean_file_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(broken_pairs(0)))
    code, out, _ = run(["validate", "--format", "json", str(path)], capsys)
    assert code == 0 and json.loads(out)["accepted"] is True and json.loads(out)["violations"] == []
