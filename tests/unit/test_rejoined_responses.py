"""How a ``lateResults=rejoin`` trimmer's moved responses are read (contract §10 policies): what is
set aside with the input contents it joins, and what stays for §10.2 to judge."""

from __future__ import annotations

from typing import Any

from ctxmodel.properties.chat_yardsticks import is_pruned_of, match_in_order
from ctxmodel.properties.gemini_yardsticks import set_aside_rejoined

Content = dict[str, Any]


def _call(name: str = "read_file") -> Content:
    return {"functionCall": {"name": name, "args": {}}}


def _response(output: str, name: str = "read_file") -> Content:
    return {"functionResponse": {"name": name, "response": {"output": output}}}


CALL: Content = {"role": "model", "parts": [_call()]}
OK: Content = {"role": "user", "parts": [{"text": "ok"}]}
LATE: Content = {"role": "user", "parts": [{"text": "h"}, _response("a")]}
AGAIN: Content = {"role": "user", "parts": [_response("b"), {"text": "more"}]}
REPLY: Content = {"role": "model", "parts": [{"text": "done"}]}
HISTORY: list[Content] = [CALL, OK, LATE, AGAIN, REPLY]


def _aside(answer: list[Content], pruned: bool = False) -> tuple[list[Content], list[Content], list[int]]:
    return set_aside_rejoined(answer, HISTORY, is_pruned_of, pruned)


def test_a_late_response_put_after_its_call_is_set_aside_with_its_input_content() -> None:
    left, history, where = _aside([CALL, LATE, OK, REPLY])
    assert (left, history, where) == ([CALL, OK, REPLY], [CALL, OK, AGAIN, REPLY], [0, 2, 3])
    assert match_in_order(left, history, False)[0] is not None


def test_a_join_responses_first_or_in_the_pieces_order_is_read_back() -> None:
    responses_first = {"role": "user", "parts": [_response("a"), _response("b"), {"text": "h"}, {"text": "more"}]}
    as_they_came = {"role": "user", "parts": [*LATE["parts"], *AGAIN["parts"]]}
    for joined in (responses_first, as_they_came):
        assert _aside([CALL, joined, OK, REPLY])[1] == [CALL, OK, REPLY]


def test_a_response_dropped_from_the_join_is_read_only_under_trim_tool_calls_pairs() -> None:
    less_one = {"role": "user", "parts": [_response("b"), {"text": "h"}, {"text": "more"}]}
    assert _aside([CALL, less_one, OK], pruned=True)[1] == [CALL, OK, REPLY]
    assert _aside([CALL, less_one, OK])[0] == [CALL, less_one, OK]


def test_a_join_holding_a_prompt_or_new_text_stays_for_section_10_2() -> None:
    with_prompt = {"role": "user", "parts": [_response("a"), {"text": "h"}, {"text": "ok"}]}
    edited = {"role": "user", "parts": [_response("a"), {"text": "h!"}]}
    for joined in (with_prompt, edited):
        left, history, _ = _aside([CALL, joined, REPLY])
        assert left == [CALL, joined, REPLY] and history == HISTORY
        assert match_in_order(left, history, False)[2] == "invented"


def test_a_join_not_right_after_its_call_or_of_another_function_stays() -> None:
    assert _aside([LATE, CALL, OK])[0] == [LATE, CALL, OK]
    other = [{"role": "model", "parts": [_call("write_file")]}, LATE]
    assert _aside(other)[0] == other


def test_a_content_is_set_aside_once_so_a_repeated_pair_is_still_duplicated() -> None:
    left, history, _ = _aside([CALL, LATE, CALL, LATE])
    assert left == [CALL, CALL, LATE]
    assert match_in_order(left, history, False)[2] == "duplicated"


def test_responses_may_come_in_the_order_of_their_calls() -> None:
    calls = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "id": "a"}},
                                        {"functionCall": {"name": "f", "args": {}, "id": "b"}}]}

    def answer(call_id: str, output: str) -> Content:
        return {"functionResponse": {"name": "f", "id": call_id, "response": {"output": output}}}

    first = {"role": "user", "parts": [answer("a", ""), answer("b", "")]}
    last = {"role": "user", "parts": [answer("a", "h"), {"text": "h"}]}
    history = [calls, first, last]
    by_calls = {"role": "user", "parts": [answer("a", "h"), answer("b", ""), {"text": "h"}]}
    backwards = {"role": "user", "parts": [answer("b", ""), answer("a", ""), {"text": "h"}]}
    assert set_aside_rejoined([calls, by_calls], history, is_pruned_of, True)[1] == [calls]
    assert set_aside_rejoined([calls, by_calls], history, is_pruned_of, False)[0] == [calls, by_calls]
    assert set_aside_rejoined([calls, backwards], history, is_pruned_of, True)[0] == [calls, backwards]


def test_one_content_answering_two_call_contents_may_be_split_between_them() -> None:
    def call(call_id: str) -> Content:
        return {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "id": call_id}}]}

    def answer(call_id: str) -> Content:
        return {"functionResponse": {"name": "f", "id": call_id, "response": {"output": call_id}}}

    both = {"role": "user", "parts": [answer("a"), answer("b")]}
    history = [call("a"), call("b"), both]
    split = [call("a"), {"role": "user", "parts": [answer("a")]}, call("b"), {"role": "user", "parts": [answer("b")]}]
    left, rest, _ = set_aside_rejoined(split, history, is_pruned_of, False)
    assert (left, rest) == ([call("a"), call("b")], [call("a"), call("b")])
    half = split[:2]
    assert set_aside_rejoined(half, history, is_pruned_of, False)[1] == history  # b's answer is not placed
