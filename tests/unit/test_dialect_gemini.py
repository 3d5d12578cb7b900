"""Gemini contents as a dialect: the codec loses nothing, the oracle names what the API names (its
texts, the content's path), and repair makes each kind of broken request acceptable while keeping
every other content as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import detect, get
from ctxmodel.dialects.gemini import (
    CALL_TURN_TEXT,
    COUNT_TEXT,
    RESPONSE_TURN_TEXT,
    SKIP_SIGNATURE,
    count,
    load,
    render,
    repair,
    signature_text,
    validate,
)
from ctxmodel.errors import HistoryError
from ctxmodel.tokens import get_counter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gemini"


def _contents(name: str) -> list[Any]:
    value = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    contents: list[Any] = value["contents"]
    return contents


def _user(text: str = "go") -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _calls(*names: str, sig: str | None = None, fid: bool = False) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for k, name in enumerate(names):
        call: dict[str, Any] = {"name": name, "args": {"path": "a.py"}}
        if fid:
            call = {"id": f"c{k}", **call}
        part: dict[str, Any] = {"functionCall": call}
        if sig is not None and k == 0:
            part["thoughtSignature"] = sig
        parts.append(part)
    return {"role": "model", "parts": parts}


def _responses(*names: str, fid: bool = False) -> dict[str, Any]:
    parts = []
    for k, name in enumerate(names):
        response: dict[str, Any] = {"name": name, "response": {"output": "ok"}}
        if fid:
            response = {"id": f"c{k}", **response}
        parts.append({"functionResponse": response})
    return {"role": "user", "parts": parts}


def _rules(contents: list[Any]) -> list[str]:
    return [v.rule for v in validate(load(contents))]


# -- codec and detection ----------------------------------------------------------------------------

def test_load_refuses_what_is_not_an_array_of_objects_naming_the_place() -> None:
    with pytest.raises(HistoryError, match="contents"):
        load({"role": "user"})
    with pytest.raises(HistoryError, match=r"contents\.1"):
        load([_user(), "text"])


def test_a_gemini_history_is_detected_and_an_anthropic_one_is_not() -> None:
    assert detect(_contents("unanswered-call.json")).name == "gemini"
    assert detect([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]).name == "anthropic"
    assert get("gemini").has_visibility is False


# -- the oracle -------------------------------------------------------------------------------------


def test_an_unanswered_call_fails_with_the_apis_count_text_at_the_response_turn() -> None:
    got = validate(load(_contents("unanswered-call.json")))
    assert [(v.rule, v.path, v.message) for v in got] == [("function-response-count", "contents.2", COUNT_TEXT)]


def test_a_call_turn_at_the_end_of_the_request_is_unanswered() -> None:
    assert _rules([_user(), _calls("read_file")]) == ["function-response-count"]


def test_a_missing_signature_in_the_current_turn_fails_with_the_apis_text_name_and_position() -> None:
    got = validate(load(_contents("missing-signature.json")))
    assert [(v.rule, v.path) for v in got] == [("missing-thought-signature", "contents.3.parts.1")]
    assert got[0].message == signature_text("read_file", 4)
    assert "function call `default_api:read_file` , position 4." in got[0].message


def test_only_the_current_turn_and_only_the_first_call_of_a_step_needs_a_signature() -> None:
    old_turn_unsigned = [_user(), _calls("a"), _responses("a"), _user("next"), _calls("b", "c", sig="s"),
                         _responses("b", "c")]
    assert _rules(old_turn_unsigned) == []


def test_an_unsigned_history_from_a_model_that_does_not_sign_is_not_held_to_signatures() -> None:
    assert _rules([_user(), _calls("a"), _responses("a")]) == []


def test_a_response_turn_after_no_call_turn_and_a_call_turn_first_fail_with_the_apis_texts() -> None:
    got = validate(load([_user(), _responses("a")]))
    assert [(v.rule, v.message) for v in got] == [("response-turn-position", RESPONSE_TURN_TEXT)]
    got = validate(load([_calls("a"), _responses("a")]))
    assert [(v.rule, v.message) for v in got] == [("call-turn-position", CALL_TURN_TEXT)]


def test_more_responses_than_calls_and_a_response_to_no_call_id_fail() -> None:
    assert _rules([_user(), _calls("a"), _responses("a", "b")]) == ["function-response-count"]
    wrong = _responses("a", fid=True)
    wrong["parts"][0]["functionResponse"]["id"] = "zz"
    assert _rules([_user(), _calls("a", fid=True), wrong]) == ["function-response-id"]


def test_snake_case_dumps_read_as_the_api_spelling() -> None:
    contents = [_user(), {"role": "model", "parts": [{"function_call": {"name": "a", "args": {}},
                                                      "thought_signature": "s"}, {"function_call": {"name": "b"}}]},
                {"role": "user", "parts": [{"function_response": {"name": "a", "response": {}}}]}]
    assert _rules(contents) == ["function-response-count"]


def test_shapes_are_named_by_path() -> None:
    assert [(v.rule, v.path) for v in validate(load([{"role": "assistant", "parts": [{"text": "x"}]}]))] == [
        ("content-shape", "contents.0.role")]
    assert [(v.rule, v.path) for v in validate(load([{"role": "user", "parts": []}]))] == [
        ("content-shape", "contents.0.parts")]
    assert _rules([]) == ["empty-contents"]


# -- repair -----------------------------------------------------------------------------------------


def test_repair_answers_the_missing_call_in_order_and_keeps_every_other_content() -> None:
    source = load(_contents("unanswered-call.json"))
    fixed, report = repair(source)
    assert validate(fixed) == [] and not report.unresolved
    responses = fixed[2].raw["parts"]
    assert [p["functionResponse"]["name"] for p in responses] == ["list_files", "read_file"]
    assert responses[1]["functionResponse"]["response"] == {"error": INTERRUPTED_TEXT}
    assert fixed[0] is source[0] and fixed[1] is source[1]
    assert [c.line() for c in report.changes] == [
        "contents.2: function-response-count read_file: synthetic response added (interrupted)"]


def test_repair_adds_a_response_turn_after_a_call_turn_at_the_end_with_the_call_ids() -> None:
    fixed, _ = repair(load([_user(), _calls("a", "b", fid=True)]))
    assert validate(fixed) == []
    assert [p["functionResponse"]["id"] for p in fixed[2].raw["parts"]] == ["c0", "c1"]


def test_repair_gives_a_lost_signature_the_skip_value_and_leaves_the_call() -> None:
    fixed, report = repair(load(_contents("missing-signature.json")))
    assert validate(fixed) == []
    part = fixed[3].raw["parts"][1]
    assert part["thoughtSignature"] == SKIP_SIGNATURE and part["functionCall"]["name"] == "read_file"
    assert [c.rule for c in report.changes] == ["missing-thought-signature"]


@pytest.mark.parametrize(("orphans", "kept"), [("to_text", True), ("drop", False)])
def test_repair_turns_orphan_responses_to_text_or_drops_them(orphans: str, kept: bool) -> None:
    fixed, _ = repair(load([_user(), _calls("a"), _responses("a", "b"), _user("x"), _responses("c")]),
                      orphans=orphans)
    assert validate(fixed) == []
    texts = [p.get("text", "") for c in fixed for p in c.raw["parts"]]
    assert any(t.startswith(CONVERSION_PREFIX) for t in texts) is kept
    assert len(fixed) == (5 if kept else 4)


def test_repair_writes_the_spelling_the_content_uses() -> None:
    contents = [_user(), {"role": "model", "parts": [{"function_call": {"name": "a", "args": {}}}]}]
    fixed, _ = repair(load(contents))
    assert list(fixed[2].raw["parts"][0]) == ["function_response"]


def test_a_valid_history_is_returned_as_it_came() -> None:
    source = load([_user(), _calls("a", sig="s"), _responses("a")])
    fixed, report = repair(source)
    assert fixed == source and not report.changed


# -- view and count ---------------------------------------------------------------------------------


def test_render_marks_calls_signatures_results_and_the_place_pointed_at() -> None:
    view = render(load(_contents("unanswered-call.json")), highlight=("contents.2",))
    assert "[use:list_files +sig] [use:read_file]" in view
    assert view.splitlines()[2].startswith(">> #2 user")


def test_count_has_a_piece_per_part_and_ignores_the_signature() -> None:
    counter = get_counter("zoo")
    pieces = count(load(_contents("missing-signature.json")), counter)
    assert [p.path for p in pieces][:3] == ["contents.0.parts.0", "contents.1.parts.0", "contents.2.parts.0"]
    signed = count(load([_calls("a", sig="x" * 400)]), counter)
    unsigned = count(load([_calls("a")]), counter)
    assert signed == unsigned
