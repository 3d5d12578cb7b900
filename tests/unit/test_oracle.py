"""The API oracle, rule by rule, with the API's exact texts (contract §6, domain §5.1)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxmodel.codec import load
from ctxmodel.oracle import RULES, Violation, validate


def use(tool_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"path": "src/app.ts"}}


def result(tool_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


THINK = {"type": "thinking", "thinking": "Let me look.", "signature": "sig"}


def check(*messages: dict[str, Any], thinking: bool | None = None) -> list[Violation]:
    return validate(load(list(messages)), thinking=thinking)


def rules(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.rule, v.path) for v in violations]


def test_a_clean_parallel_tool_turn_passes() -> None:
    assert (
        check(
            user(text("Fix the build")),
            assistant(text("Reading both."), use("toolu_a"), use("toolu_b", "execute_command")),
            user(result("toolu_b"), result("toolu_a", [text("x")], is_error=True), text("<environment_details>")),
            assistant(text("Done.")),
        )
        == []
    )


def test_an_empty_request_is_rejected_and_a_pending_final_tool_use_passes() -> None:
    assert validate(()) == [Violation("empty-messages", "messages", "messages: at least one message is required")]
    assert check(user(text("go")), assistant(use("toolu_a"))) == []


def test_missing_result_uses_the_api_text_on_the_assistant_message() -> None:
    found = check(user(text("go")), assistant(use("toolu_a"), use("toolu_b")), user(result("toolu_a")))
    assert found == [
        Violation(
            "missing-tool-result",
            "messages.1",
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. "
            "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        )
    ]
    assert found[0].ids == ("toolu_b",)


def test_missing_results_list_every_id_in_tool_use_order() -> None:
    found = check(user(text("go")), assistant(use("a"), use("b")), assistant(text("hm")))
    assert found[0].message.startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: a, b. "
    )


def test_a_result_after_text_is_not_leading() -> None:
    found = check(user(text("go")), assistant(use("a")), user(text("wait"), result("a")))
    assert rules(found) == [("missing-tool-result", "messages.1"), ("tool-result-not-first", "messages.2.content.1")]


def test_results_separated_by_an_image_still_miss_the_second_id() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}
    found = check(user(text("go")), assistant(use("a"), use("b")), user(result("a"), image, result("b")))
    assert rules(found) == [("missing-tool-result", "messages.1"), ("tool-result-not-first", "messages.2.content.2")]
    assert "immediately after: b." in found[0].message


def test_orphan_result_uses_the_api_text_with_its_block_path() -> None:
    found = check(user(text("go")), assistant(use("a")), user(result("a"), result("zz")))
    assert found == [
        Violation(
            "unexpected-tool-use-id",
            "messages.2.content.1",
            "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: zz. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        )
    ]


def test_results_after_a_user_message_or_first_are_orphans() -> None:
    found = check(user(result("a")), assistant(use("a")), user(result("a")), user(result("a")))
    assert rules(found) == [
        ("unexpected-tool-use-id", "messages.0.content.0"),
        ("unexpected-tool-use-id", "messages.3.content.0"),
    ]


def test_duplicate_tool_use_id_is_reported_at_the_later_block() -> None:
    found = check(user(text("go")), assistant(use("a")), user(result("a")), assistant(use("a")), user(result("a")))
    assert found == [
        Violation(
            "duplicate-tool-use-id", "messages.3.content.0", "messages.3.content.0: `tool_use` ids must be unique"
        )
    ]


def test_duplicate_tool_use_id_within_one_message() -> None:
    found = check(user(text("go")), assistant(use("a"), use("a")), user(result("a")))
    assert rules(found) == [("duplicate-tool-use-id", "messages.1.content.1")]


def test_duplicate_result_in_one_message() -> None:
    found = check(user(text("go")), assistant(use("a")), user(result("a"), result("a", "again")))
    assert rules(found) == [("duplicate-tool-result", "messages.2.content.1")]
    assert "each tool_use must have a single result" in found[0].message


@pytest.mark.parametrize("bad", ["toolu.01", "call:1", "a b", "", "x\n", "tööl"])
def test_id_pattern_on_both_sides(bad: str) -> None:
    found = check(user(text("go")), assistant(use(bad)), user(result(bad)))
    assert found == [
        Violation(
            "invalid-tool-id",
            "messages.1.content.0",
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        ),
        Violation(
            "invalid-tool-id",
            "messages.2.content.0",
            "messages.2.content.0.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        ),
    ]


def test_empty_user_message_string_or_list() -> None:
    empties: tuple[str, list[Any]] = ("", [])
    for empty in empties:
        found = check(user(text("go")), assistant(text("ok")), {"role": "user", "content": empty})
        assert found == [
            Violation("empty-user-message", "messages.2", "messages.2: user messages must have non-empty content")
        ]


def test_empty_assistant_message_only_in_final_position() -> None:
    empties: tuple[str, list[Any]] = ("", [])
    for empty in empties:
        final = check(user(text("go")), {"role": "assistant", "content": empty})
        assert final == []
        inner = check(user(text("go")), {"role": "assistant", "content": empty}, user(text("again")))
        assert inner == [
            Violation(
                "empty-message",
                "messages.1",
                "messages.1: all messages must have non-empty content except for the optional final assistant message",
            )
        ]


def test_empty_text_block_matrix() -> None:
    # domain §5.1 matrix: [{text: ""}, tool_use] 400; [{text: ""}, {text: "x"}] 400.
    found = check(user(text("go")), assistant(text(""), use("a")), user(result("a")))
    assert found == [
        Violation("empty-text-block", "messages.1.content.0", "messages: text content blocks must be non-empty")
    ]
    assert rules(check(user(text(""), text("x")))) == [("empty-text-block", "messages.0.content.0")]


def test_empty_content_inside_a_tool_result_is_accepted() -> None:
    # domain §5.1 matrix: tool_result content "", [], " " or [{text: ""}] -> 200.
    for content in ("", [], " ", [text("")]):
        assert check(user(text("go")), assistant(use("a")), user(result("a", content))) == []


def test_whitespace_text_only_when_it_is_the_only_content() -> None:
    whitespace = "messages: text content blocks must contain non-whitespace text"
    assert check(user(text("go")), assistant(text(" "))) == [
        Violation("whitespace-text", "messages.1.content.0", whitespace)
    ]
    assert check({"role": "user", "content": " \n"}) == [Violation("whitespace-text", "messages.0", whitespace)]
    # accepted by the API: whitespace next to a tool_use, or next to real text
    assert check(user(text("go")), assistant(text("\n\n"), use("a")), user(result("a"))) == []
    assert check(user(text("hi"), text(" "))) == []


def test_first_message_must_be_user() -> None:
    found = check(assistant(text("Summary of earlier work")), user(text("go on")))
    assert found == [
        Violation("first-message-not-user", "messages.0", 'messages: first message must use the "user" role')
    ]


def test_tool_result_in_assistant_and_tool_use_in_user() -> None:
    found = check(user(text("go"), use("a")), assistant(text("x"), result("a")))
    assert rules(found) == [
        ("tool-use-in-user", "messages.0.content.1"),
        ("tool-result-in-assistant", "messages.1.content.1"),
    ]


THINKING_TEXT = (
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is "
    "enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` "
    "and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this "
    "requirement, disable `thinking`."
)


def test_thinking_enabled_requires_thinking_first_in_the_final_tool_turn() -> None:
    history = (user(text("go")), assistant(use("a")), user(result("a")))
    assert check(*history, thinking=True) == [Violation("thinking-required", "messages.1.content.0", THINKING_TEXT)]
    assert check(*history) == []  # inferred: no thinking block anywhere, so thinking is off
    assert check(*history, thinking=False) == []


def test_thinking_inferred_from_an_earlier_thinking_block() -> None:
    found = check(
        user(text("go")),
        assistant(THINK, use("a")),
        user(result("a")),
        assistant(text("Now the test."), use("b")),
        user(result("b")),
    )
    assert rules(found) == [("thinking-required", "messages.3.content.0")]
    assert "but found `text`" in found[0].message


def test_thinking_first_or_redacted_is_accepted_and_earlier_turns_may_drop_it() -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgB"}
    assert check(user(text("go")), assistant(redacted, use("a")), user(result("a")), thinking=True) == []
    assert (
        check(
            user(text("go")),
            assistant(use("a")),
            user(result("a")),
            assistant(THINK, use("b")),
            user(result("b")),
            thinking=True,
        )
        == []
    )
    # the final assistant message has no tool_use: a finished turn, nothing required
    assert check(user(text("go")), assistant(use("a")), user(result("a")), assistant(text("ok")), thinking=True) == []


def test_thinking_disabled_rejects_thinking_in_the_final_assistant_message() -> None:
    found = check(user(text("go")), assistant(THINK, text("Hi")), thinking=False)
    assert found == [
        Violation(
            "thinking-disabled",
            "messages.1.content.0",
            "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot "
            "contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
        )
    ]
    assert check(user(text("go")), assistant(THINK, text("Hi")), user(text("more")), thinking=False) == []


def test_server_tool_pending_requires_only_results_next() -> None:
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    found = check(user(text("go")), assistant(server, use("a")), user(result("a"), text("and also")))
    assert rules(found) == [("server-tool-pending", "messages.2.content.1")]
    assert "srvtoolu_1" in found[0].message
    resolved = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    assert check(user(text("go")), assistant(server, resolved, use("a")), user(result("a"), text("and also"))) == []


def test_server_tool_result_without_its_use() -> None:
    advisor = {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_9", "content": []}
    found = check(user(text("go")), assistant(advisor, text("ok")))
    assert found == [
        Violation(
            "unexpected-server-tool-result",
            "messages.1.content.0",
            "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_9. "
            "Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.",
        )
    ]


def test_every_violation_names_a_known_rule_and_is_in_path_order() -> None:
    found = check(
        assistant(text(""), use("a"), use("a")),
        user(text("x"), result("b"), result("b")),
        {"role": "user", "content": []},
        assistant(THINK, use("c d")),
        thinking=False,
    )
    assert {v.rule for v in found} <= set(RULES)
    keys = [tuple(int(p) for p in v.path.split(".")[1::2]) for v in found]
    assert keys == sorted(keys)
    for rule in RULES.values():
        assert rule.summary and rule.source.startswith("domain §")


def test_validate_does_not_mutate_or_depend_on_input_identity() -> None:
    messages = [user(text("go")), assistant(use("a")), user(text("x"), result("a"))]
    history = load(messages)
    first = validate(history)
    assert validate(list(history)) == first == validate(load(messages))
