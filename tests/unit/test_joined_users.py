"""How a ``mergeUsers=yes`` trimmer's joins are read back (contract §10 policies): what is split,
and what stays whole for §10.2 to call invented."""

from __future__ import annotations

from typing import Any

from ctxmodel.properties.yardsticks import split_joined_users

U1: dict[str, Any] = {"role": "user", "content": "fix the bug"}
A: dict[str, Any] = {"role": "assistant", "content": "done"}
U2: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "and the test"}]}
HISTORY: list[Any] = [U1, A, U2]


def _join(*contents: list[Any]) -> dict[str, Any]:
    return {"role": "user", "content": [b for c in contents for b in c]}


def test_a_join_of_input_users_is_split_back_in_the_inputs_order() -> None:
    joined = _join([{"type": "text", "text": "fix the bug"}], U2["content"])
    assert split_joined_users([joined], HISTORY, placeholder=False) == [U1, U2]


def test_a_placeholder_block_is_a_piece_only_under_trim_placeholder_one() -> None:
    summary = {"type": "text", "text": "Summary of the earlier conversation."}
    joined = _join([summary], U2["content"])
    assert split_joined_users([joined], HISTORY, placeholder=True) == [{"role": "user", "content": [summary]}, U2]
    assert split_joined_users([joined], HISTORY, placeholder=False) == [joined]


def test_a_join_in_the_wrong_order_or_with_new_text_stays_whole() -> None:
    backwards = _join(U2["content"], [{"type": "text", "text": "fix the bug"}])
    edited = _join([{"type": "text", "text": "fix the bug"}, {"type": "text", "text": "\n"}], U2["content"])
    assert split_joined_users([backwards, edited], HISTORY, placeholder=False) == [backwards, edited]


def test_input_messages_and_other_roles_are_left_alone() -> None:
    assert split_joined_users([U1, A], HISTORY, placeholder=True) == [U1, A]


def test_a_long_run_of_equal_messages_that_cannot_be_split_is_read_quickly() -> None:
    history: list[Any] = [{"role": "user", "content": "h"} for _ in range(40)]
    stray = {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}}
    joined = _join([{"type": "text", "text": "h"}] * 20, [stray])
    assert split_joined_users([joined], history, placeholder=True) == [joined]
