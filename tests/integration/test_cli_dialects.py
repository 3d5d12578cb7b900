"""The history commands on OpenAI Chat Completions files: detected and said, or forced with
``--dialect``; and every Anthropic example still read as Anthropic."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodel.cli import main
from ctxmodel.dialects import detect
from ctxmodel.dialects.openai_chat import ORPHAN_TEXT, load, validate
from ctxmodel.document import open_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
OPENAI = EXAMPLES / "openai"
CLEAN, ORPHAN, UNANSWERED = (OPENAI / n for n in
                             ("clean-parallel-calls.json", "orphan-tool-after-trim.json", "unanswered-call.json"))
SAID = "OpenAI Chat Completions, detected"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        main(args)
    out, err = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 0), out, err


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_anthropic_example_is_still_read_as_anthropic(path: Path) -> None:
    document = open_document(str(path))
    assert (document.dialect, document.detected) == ("anthropic", True)
    assert document.history and document.native is None
    assert detect(json.loads(path.read_text(encoding="utf-8"))).name == "anthropic"


def test_validate_an_orphan_tool_message_exits_1_with_the_provider_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(ORPHAN)], capsys)
    assert code == 1
    assert f"messages.1: {ORPHAN_TEXT}  [tool-without-tool-calls]" in out.splitlines()
    assert SAID in err and "1 violation" in err


def test_validate_an_unanswered_call_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", str(UNANSWERED)], capsys)
    assert code == 1
    line = next(line for line in out.splitlines() if line.startswith("messages.2: "))
    assert line.endswith("did not have response messages: call_Gt9aLm4hVc1oZf6sJr0e  [unanswered-tool-calls]")


def test_validate_a_clean_file_exits_0_and_says_what_it_read(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(CLEAN)], capsys)
    assert (code, out) == (0, "")
    assert f"request of 7 messages ({SAID}): the API would accept its structure" in err
    assert "an API request body" in err


def test_validate_json_names_the_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", str(UNANSWERED), "--format", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["dialect"] == "openai-chat"
    assert [(v["rule"], v["path"], v["ids"]) for v in report["violations"]] == [
        ("unanswered-tool-calls", "messages.2", ["call_Gt9aLm4hVc1oZf6sJr0e"])
    ]


def test_the_anthropic_line_says_so_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["validate", str(EXAMPLES / "clean-session.json")], capsys)
    assert code == 0 and "Anthropic Messages, detected" in err


def test_dialect_forces_the_reading(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", "--dialect", "openai-chat", str(EXAMPLES / "clean-session.json")], capsys)
    assert code == 1 and "content-shape" in out and "OpenAI Chat Completions, as --dialect says" in err
    code, _, err = run(["validate", "--dialect", "anthropic", str(UNANSWERED)], capsys)
    assert code == 2 and 'messages.0.role: expected "user" or "assistant", got "developer"' in err
    code, _, err = run(["validate", "--dialect", "cohere", str(UNANSWERED)], capsys)
    assert code == 2 and "--dialect" in err


def test_thinking_is_refused_on_an_openai_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["validate", "--thinking", str(CLEAN)], capsys)
    assert code == 2 and "applies to Anthropic Messages" in err


@pytest.mark.parametrize("path", [ORPHAN, UNANSWERED], ids=lambda p: p.name)
def test_repair_makes_the_file_acceptable(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "fixed.json"
    code, _, err = run(["repair", str(path), "-o", str(target)], capsys)
    assert code == 0 and SAID in err and "now passes the oracle" in err
    assert validate(load(json.loads(target.read_text(encoding="utf-8")))) == []
    code, _, _ = run(["validate", str(target)], capsys)
    assert code == 0


def test_repair_keeps_untouched_messages_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "fixed.json"
    run(["repair", str(UNANSWERED), "-o", str(target)], capsys)
    before, after = UNANSWERED.read_text(encoding="utf-8"), target.read_text(encoding="utf-8")
    for line in before.splitlines():
        assert line in after.splitlines()
    assert after.count("\n") > before.count("\n")


def test_repair_in_place_keeps_a_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "h.json"
    shutil.copy(ORPHAN, copy)
    code, _, err = run(["repair", "--in-place", "--orphans", "drop", str(copy)], capsys)
    assert code == 0 and "orphan tool message dropped" in err
    assert (tmp_path / "h.json.bak").read_bytes() == ORPHAN.read_bytes()
    assert len(json.loads(copy.read_text(encoding="utf-8"))) == 6


def test_repair_of_a_clean_file_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "same.json"
    code, _, err = run(["repair", str(CLEAN), "-o", str(target)], capsys)
    assert code == 0 and "nothing to repair" in err and target.read_bytes() == CLEAN.read_bytes()


@pytest.mark.parametrize("path", [ORPHAN, UNANSWERED], ids=lambda p: p.name)
def test_show_draws_the_file_and_marks_what_breaks(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["show", "--check", str(path)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(json.loads(path.read_text(encoding="utf-8")))
    marked = [line for line in lines if line.startswith(">>")]
    assert len(marked) == 1 and ("[result " in marked[0] or "[use " in marked[0])
    assert SAID in err and "1 violation in the request" in err


def test_normalize_says_it_has_no_openai_meaning(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["normalize", str(UNANSWERED)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "defined on Anthropic Messages only" in err


def test_count_counts_an_openai_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["count", str(CLEAN), "--counter", "o200k"], capsys)
    assert code == 0
    assert f"(7 messages, all sent; {SAID})" in out
    assert "messages.2.tool_calls.0" in out and "messages.3  " in out and "image_url" in out


def test_validate_on_an_openai_file_loads_no_tokenizer() -> None:
    code = (
        "import sys\nfrom ctxmodel.cli import main\ntry:\n"
        f"    main(['validate', {str(CLEAN)!r}])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stderr.split())
    assert "ctxmodel.dialects.openai_chat" in loaded
    assert not {"tiktoken", "hypothesis", "ctxmodel.tokens.counter"} & loaded
