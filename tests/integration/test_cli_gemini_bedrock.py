"""The file commands read Gemini contents and Bedrock Converse messages: ``validate`` fails with the
API's texts, ``repair`` writes a request the oracle accepts, the request body's other keys kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ctxmodel.dialects.gemini import COUNT_TEXT, SKIP_SIGNATURE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gemini"
BEDROCK = Path(__file__).resolve().parents[2] / "examples" / "bedrock-converse"


def test_validate_and_repair_from_the_command_line(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "ctxmodel"]
    bad = subprocess.run([*cli, "validate", str(EXAMPLES / "unanswered-call.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and COUNT_TEXT in bad.stdout and "Gemini contents, detected" in bad.stderr
    out = tmp_path / "fixed.json"
    fixed = subprocess.run([*cli, "repair", str(EXAMPLES / "missing-signature.json"), "-o", str(out)],
                           capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stderr
    again = subprocess.run([*cli, "validate", "--dialect", "gemini", str(out)], capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["contents"][3]["parts"][1]["thoughtSignature"] == SKIP_SIGNATURE


def test_bedrock_split_results_are_named_and_joined_from_the_command_line(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "ctxmodel"]
    source = BEDROCK / "unanswered-parallel-call.json"
    bad = subprocess.run([*cli, "validate", str(source)], capture_output=True, text=True)
    assert bad.returncode == 1 and "Bedrock Converse messages, detected" in bad.stderr
    assert "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_sX1A7q9kipz4qAW36LUR1H" \
        in bad.stdout
    out = tmp_path / "fixed.json"
    fixed = subprocess.run([*cli, "repair", str(source), "-o", str(out)], capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stderr
    body = json.loads(out.read_text(encoding="utf-8"))
    assert len(body["messages"]) == 3 and body["toolConfig"] == json.loads(source.read_text("utf-8"))["toolConfig"]
