"""``is_pruned_of`` (contract §10, ``trimToolCalls=pairs``): an assistant message less some of its tool
calls, in both dialects, and nothing else."""

from __future__ import annotations

from typing import Any

from ctxmodel.properties.chat_yardsticks import is_placeholder, is_pruned_of, masked_placeholders, match_in_order


def _call(i: str) -> dict[str, Any]:
    return {"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


CHAT = {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("a"), _call("b")]}
ANTHROPIC = {"role": "assistant", "content": [
    {"type": "text", "text": "Let me look."},
    {"type": "tool_use", "id": "a", "name": "read_file", "input": {}},
    {"type": "tool_use", "id": "b", "name": "read_file", "input": {}},
]}


def test_a_chat_message_less_some_calls_is_pruned() -> None:
    assert is_pruned_of({**CHAT, "tool_calls": [_call("b")]}, CHAT)
    assert is_pruned_of({"role": "assistant", "content": "Let me look."}, CHAT)  # none left: the key goes
    assert not is_pruned_of(CHAT, CHAT)  # nothing dropped: equal, not pruned
    assert not is_pruned_of({**CHAT, "tool_calls": [_call("b"), _call("a")]}, CHAT)  # reordered
    assert not is_pruned_of({**CHAT, "content": "Done.", "tool_calls": [_call("a")]}, CHAT)  # text changed


def test_an_anthropic_message_less_some_tool_use_blocks_is_pruned() -> None:
    content = ANTHROPIC["content"]
    assert is_pruned_of({**ANTHROPIC, "content": [content[0], content[2]]}, ANTHROPIC)
    assert not is_pruned_of({**ANTHROPIC, "content": [content[1], content[2]]}, ANTHROPIC)  # text dropped
    assert not is_pruned_of({"role": "user", "content": [content[0]]}, ANTHROPIC)


def test_match_in_order_names_an_undeclared_pruning() -> None:
    pruned = [{**CHAT, "tool_calls": [_call("a")]}]
    assert match_in_order(pruned, [CHAT], partial=False)[2] == "calls-dropped-undeclared"
    assert match_in_order(pruned, [CHAT], partial=False, pruned=True) == ([0], -1, "")


def test_one_declared_placeholder_stands_only_where_messages_were_dropped() -> None:
    a, b, c = ({"role": "user", "content": t} for t in "abc")
    skipped = {"role": "user", "content": "Skipped 1 messages."}
    assert match_in_order([a, skipped, c], [a, b, c], partial=False, placeholder=True) == ([0, 2], -1, "")
    assert match_in_order([skipped, c], [a, c], partial=False, placeholder=True) == ([1], -1, "")
    assert match_in_order([a, skipped, c], [a, b, c], partial=False)[2] == "invented"  # not declared
    assert match_in_order([a, skipped, b, c], [a, b, c], partial=False, placeholder=True)[1:] == (1, "invented")
    assert match_in_order([a, b, c, skipped], [a, b, c], partial=False, placeholder=True)[1:] == (3, "invented")
    assert match_in_order([skipped, a, skipped, c], [a, b, c], partial=False, placeholder=True)[2] == "invented"
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "x", "type": "function",
                                                                  "function": {"name": "f", "arguments": "{}"}}]}
    assert not is_placeholder(call) and not is_placeholder({"role": "system", "content": "s"})
    assert is_placeholder({"role": "assistant", "content": [{"type": "text", "text": "…"}]})


def test_a_placeholder_is_compared_by_its_role_alone() -> None:
    a = {"role": "user", "content": "a"}
    one, two = ({"role": "user", "content": f"Skipped {n} messages."} for n in (1, 2))
    assert masked_placeholders([one, a], [a]) == masked_placeholders([two, a], [a]) != masked_placeholders([a], [a])
    assert masked_placeholders([a], [a]) == [a]  # an input message is never masked


def test_an_assistant_message_may_keep_its_calls_and_lose_its_text_as_a_partial() -> None:
    call = [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    said = {"role": "assistant", "content": "Let me look.", "tool_calls": call}
    calls_alone = {"role": "assistant", "content": None, "tool_calls": call}
    assert match_in_order([calls_alone], [said], partial=True) == ([0], -1, "")
    assert match_in_order([calls_alone], [said], partial=False)[2] == "cut-undeclared"
    assert match_in_order([{"role": "assistant", "content": None}], [{"role": "assistant", "content": "h"}],
                          partial=True)[2] == "invented"  # no calls: an emptied message is not a partial
