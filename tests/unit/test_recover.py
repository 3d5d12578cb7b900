"""The context-recovery reference, clause by clause (contract §4; domain §3.3, §3.7, §7 C).

Most tests run with a small deterministic counter (``CharCounter``: ``ceil(len / 4)`` raw tokens
per serialized block, fudge 1.5 once per call) so that budgets are easy to reason about; the
4 MB case and the CLI also run with the real ``zoo`` counter when ``ctxmodel.tokens`` is present.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner

from ctxmodel.codec import dump, load
from ctxmodel.errors import UsageError
from ctxmodel.model import Block, Image, Message, Text, ToolResult, ToolUse
from ctxmodel.recover import (
    FAILED_PREFIX,
    FLOOR_CHARS,
    Recovery,
    allowed_tokens,
    marker_text,
    notice_text,
    recover,
)
from ctxmodel.visibility import effective, visible_mask


class CharCounter:
    """A stand-in for ``ctxmodel.tokens.Counter``: same interface, same fudge rule, trivial raw counts.

    ``encoded`` records the length of every text it had to count (cache misses), so tests can check
    that recovery does not re-count big blocks.
    """

    name = "chars4"
    encoding = "chars4"
    fudge = (3, 2)

    def __init__(self) -> None:
        self.encoded: list[int] = []
        self._cache: dict[str, int] = {}

    def raw_text(self, text: str) -> int:
        if text not in self._cache:
            self.encoded.append(len(text))
            self._cache[text] = (len(text) + 3) // 4
        return self._cache[text]

    def raw_block(self, block: Block) -> int:
        if isinstance(block, Text):
            return self.raw_text(block.text)
        if isinstance(block, Image):
            data = block.data
            return math.ceil(math.sqrt(len(data))) if data is not None else 300
        if isinstance(block, ToolUse):
            return self.raw_text(f"Tool: {block.name}\nArguments: {json.dumps(block.input, separators=(',', ':'))}")
        if isinstance(block, ToolResult):
            lines = [f"Tool Result ({block.tool_use_id})"]
            if block.is_error:
                lines.append("[Error]")
            if isinstance(block.content, str):
                lines.append(block.content)
            elif block.content is not None:
                for item in block.content:
                    if isinstance(item, Text):
                        lines.append(item.text)
                    elif isinstance(item, Image):
                        lines.append("[Image content]")
                    else:
                        lines.append(f"[Unsupported content block: {item.type}]")
            return self.raw_text("\n".join(lines))
        return 0

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        total = sum(self.raw_block(b) for b in blocks)
        return (3 * total + 1) // 2

    def count_messages(self, messages: Iterable[Message]) -> int:
        return self.count_blocks(b for m in messages for b in m.blocks)

    def count_text(self, text: str) -> int:
        return self.count_blocks([Text(text)]) if text else 0


def real_counter() -> Any:
    tokens = pytest.importorskip("ctxmodel.tokens")
    if not hasattr(tokens, "get_counter"):
        pytest.skip("ctxmodel.tokens.get_counter not available yet")
    return tokens.get_counter("zoo")


def fixed_ids(*ids: str) -> Any:
    it = iter(ids)
    return lambda: next(it)


def user(text: str, **meta: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **meta}


def assistant_call(tool_id: str, text: str = "calling", **meta: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": tool_id, "name": "read", "input": {}}],
        **meta,
    }


def results(tool_id: str, content: Any, **meta: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content}], **meta}


def conversation(turns: int, size: int = 400) -> list[dict[str, Any]]:
    """A task, then ``turns`` tool round trips of ``size`` characters each, timestamps 1000, 1010..."""
    out = [user("the task " + "t" * 40, ts=1000)]
    for t in range(turns):
        out.append(assistant_call(f"toolu_{t}", ts=1001 + 10 * t))
        out.append(results(f"toolu_{t}", f"result {t} " + "r" * size, ts=1002 + 10 * t))
    return out


def run(value: list[dict[str, Any]], **kw: Any) -> tuple[Recovery, list[dict[str, Any]]]:
    """Recover ``value`` and check purity on the way: the dumped input is unchanged afterwards."""
    before = copy.deepcopy(value)
    history = load(value)
    kw.setdefault("counter", CharCounter())
    kw.setdefault("new_id", fixed_ids("trunc-1", "trunc-2"))
    result = recover(history, **kw)
    assert value == before, "recover mutated its input"
    assert dump(history) == before, "recover mutated the loaded history"
    return result, result.to_json()["messages"]


def recount(result: Recovery, counter: Any, system_prompt: str = "") -> int:
    total: int = counter.count_text(system_prompt) + counter.count_messages(effective(result.messages))
    return total


def tokens_of(value: list[dict[str, Any]], counter: Any | None = None) -> int:
    return (counter or CharCounter()).count_messages(effective(load(value)))


def pairing_issues(history: Any) -> list[tuple[str, str]]:
    """Rules 1 and 4 of contract §3 as an API sees adjacency, keyed by rule and tool id (§4 rule 4)."""
    out: list[tuple[str, str]] = []
    for n, m in enumerate(history):
        nxt = history[n + 1] if n + 1 < len(history) else None
        prev = history[n - 1] if n else None
        if m.role == "assistant" and nxt is not None:
            leading: set[str] = set()
            if nxt.role == "user":
                for b in nxt.blocks:
                    if not isinstance(b, ToolResult):
                        break
                    leading.add(b.tool_use_id)
            out += [("missing", u.id) for u in m.tool_uses if u.id not in leading]
        ok = {u.id for u in prev.tool_uses} if prev is not None and prev.role == "assistant" else set()
        out += [("unexpected", r.tool_use_id) for r in m.tool_results if r.tool_use_id not in ok or m.role != "user"]
    return sorted(out)


# -- budget (contract §4 budget, rule 1) ----------------------------------------------------------


def test_allowed_is_floor_of_nine_tenths_minus_reserve() -> None:
    assert allowed_tokens(100_000, 30_000) == 60_000
    assert allowed_tokens(200_000, 0) == 180_000 - 8192  # maxTokens <= 0 means the 8192 reserve
    assert allowed_tokens(200_000, -1) == 180_000 - 8192
    assert allowed_tokens(11, 1) == 8  # floor(9.9) - 1
    assert allowed_tokens(9_999, 1) == 8_998  # floor(8999.1) - 1


@pytest.mark.parametrize(("window", "max_tokens"), [(10_000, 9_000), (9_000, 0), (0, 100), (-5, 1)])
def test_no_room_is_a_controlled_error(window: int, max_tokens: int) -> None:
    value = conversation(2)
    result, messages = run(value, context_window=window, max_tokens=max_tokens)
    assert result.error is not None and result.error.startswith(FAILED_PREFIX)
    assert messages == value
    assert result.messages_removed == 0 and result.truncation_id is None
    assert result.new_context_tokens == result.prev_context_tokens == tokens_of(value)
    assert result.allowed <= 0


# -- within budget (rule 2) -----------------------------------------------------------------------


def test_a_count_equal_to_allowed_is_within_budget() -> None:
    value = conversation(3)
    count = tokens_of(value)
    # allowed = floor(0.9 W) - reserve == count with W = 10 * (count + 100) / 9 rounded up.
    max_tokens = 100
    window = math.ceil((count + max_tokens) * 10 / 9)
    while allowed_tokens(window, max_tokens) > count:
        max_tokens += 1
    assert allowed_tokens(window, max_tokens) == count
    calls: list[str] = []

    def no_id() -> str:
        calls.append("called")
        return "x"

    result, messages = run(value, context_window=window, max_tokens=max_tokens, new_id=no_id)
    assert result.error is None and messages == value
    assert result.messages_removed == 0 and result.truncation_id is None and result.degraded == ()
    assert result.prev_context_tokens == result.new_context_tokens == count
    assert calls == []


def test_system_prompt_counts_with_its_own_fudge() -> None:
    counter = CharCounter()
    value = conversation(1)
    result, _ = run(value, context_window=1_000_000, max_tokens=1, system_prompt="abcde", counter=counter)
    assert result.prev_context_tokens == counter.count_text("abcde") + tokens_of(value)
    assert counter.count_text("abcde") == 3  # ceil(1.5 * 2): fudged on its own, not with the history


def test_total_tokens_is_accepted_and_ignored() -> None:
    value = conversation(4)
    a, _ = run(value, context_window=1_000, max_tokens=1)
    b, _ = run(value, context_window=1_000, max_tokens=1, total_tokens=5)
    assert a == b


def test_bad_parameters_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="contextWindow"):
        recover(load(conversation(1)), context_window="big", max_tokens=1, counter=CharCounter())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="maxTokens"):
        recover(load(conversation(1)), context_window=10, max_tokens=True, counter=CharCounter())
    with pytest.raises(UsageError, match="totalTokens"):
        recover(load(conversation(1)), context_window=10, max_tokens=1, total_tokens="5", counter=CharCounter())  # type: ignore[arg-type]


# -- truncation (rule 3 and the reference's choice) -----------------------------------------------


def budget_for(value: list[dict[str, Any]], target: int) -> dict[str, int]:
    """Params whose ``allowed`` is exactly ``target`` (reserve 1000)."""
    window = math.ceil((target + 1000) * 10 / 9)
    while allowed_tokens(window, 1000) > target:
        window -= 1
    while allowed_tokens(window, 1000) < target:
        window += 1
    assert allowed_tokens(window, 1000) == target
    return {"context_window": window, "max_tokens": 1000}


def test_truncation_hides_the_fewest_oldest_and_inserts_one_marker() -> None:
    value = conversation(6)
    total = tokens_of(value)
    result, messages = run(value, **budget_for(value, total - 200))
    assert result.error is None and result.degraded == ()
    assert result.truncation_id == "trunc-1"
    hidden = [i for i, m in enumerate(messages) if m.get("truncationParent") == "trunc-1"]
    assert result.messages_removed == len(hidden) > 0
    # The oldest visible messages after the first: positions 1..N of the input.
    assert hidden == list(range(1, len(hidden) + 1))
    marker = messages[len(hidden) + 1]
    first_kept = value[len(hidden) + 1]
    assert marker == {
        "role": "user",
        "content": marker_text(len(hidden)),
        "ts": first_kept["ts"] - 1,
        "isTruncationMarker": True,
        "truncationId": "trunc-1",
    }
    assert len(messages) == len(value) + 1
    # Fewest: hiding one pair fewer would not fit (pairs are never split here).
    fewer = copy.deepcopy(value)
    for m in fewer[1 : len(hidden) - 1]:
        m["truncationParent"] = "t"
    fewer.insert(len(hidden) - 1, {**marker, "truncationId": "t", "content": marker_text(len(hidden) - 2)})
    assert tokens_of(fewer) > result.allowed
    assert result.new_context_tokens == recount(result, CharCounter()) <= result.allowed
    assert result.new_context_tokens < result.prev_context_tokens
    # Untagged messages are unchanged (domain §7 C5).
    kept = [m for m in messages if "truncationParent" not in m and not m.get("isTruncationMarker")]
    assert kept == [m for m in value if m not in [value[i] for i in hidden]]


def test_marker_has_no_ts_when_the_first_kept_has_none() -> None:
    value = conversation(6)
    for m in value:
        del m["ts"]
    _result, messages = run(value, **budget_for(value, tokens_of(value) - 200))
    markers = [m for m in messages if m.get("isTruncationMarker")]
    assert len(markers) == 1 and "ts" not in markers[0]


def test_truncation_never_separates_a_tool_use_from_its_results() -> None:
    value = conversation(6)
    total = tokens_of(value)
    for free in range(1, total, 37):
        result, _messages = run(value, **budget_for(value, total - free))
        if result.error is not None:
            continue
        hist = result.messages
        mask = visible_mask(hist)
        for i, m in enumerate(hist[:-1]):
            if m.tool_uses and hist[i + 1].tool_results:
                assert mask[i] == mask[i + 1], f"pair {i} split at free={free}"
        assert pairing_issues(effective(hist)) == pairing_issues(effective(load(value)))


def test_first_visible_last_visible_and_old_markers_are_never_tagged() -> None:
    value = conversation(8)
    total = tokens_of(value)
    first, _ = run(value, **budget_for(value, total - 300))
    assert first.error is None and first.messages_removed > 0
    again_value = first.to_json()["messages"]
    second, messages = run(again_value, **budget_for(again_value, tokens_of(again_value) - 300), new_id=fixed_ids("t2"))
    assert second.error is None and second.truncation_id == "t2"
    assert "truncationParent" not in messages[0]
    assert "truncationParent" not in messages[-1] and "truncationParent" not in messages[-2]  # last and its call
    old = [m for m in messages if m.get("truncationId") == "trunc-1"]
    assert len(old) == 1 and "truncationParent" not in old[0]  # the old marker stays untagged and visible
    assert sum(1 for m in messages if m.get("truncationParent") == "t2") == second.messages_removed
    assert sum(1 for m in messages if m.get("truncationId") == "t2") == 1


def test_only_visible_messages_are_tagged_after_a_summary() -> None:
    value = [
        *conversation(2),
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Conversation Summary\nsum"}],
            "isSummary": True,
            "condenseId": "c1",
            "ts": 2000,
        },
    ]
    for m in value[:-1]:
        m["condenseParent"] = "c1"
    value += conversation(6)[1:]
    total = tokens_of(value)
    result, messages = run(value, **budget_for(value, total - 200))
    assert result.error is None and result.messages_removed > 0
    for i, m in enumerate(messages[:5]):
        assert "truncationParent" not in m, i  # hidden by the summary already: never re-tagged
    assert "truncationParent" not in messages[5]  # the summary is the first visible message


def test_results_after_a_summary_never_lose_their_call() -> None:
    # After the summary: [summary, assistant call a, results a, assistant call b, results b (big), task...]:
    # the first kept message must never begin with results whose tool_use got hidden.
    value: list[dict[str, Any]] = [
        {"role": "user", "content": "## Conversation Summary\nshort", "isSummary": True, "condenseId": "c"},
        assistant_call("a"),
        results("a", "x" * 800),
        assistant_call("b"),
        results("b", "y" * 800),
        user("go on " + "z" * 800),
        assistant_call("c"),
        results("c", "w" * 50),
    ]
    total = tokens_of(value)
    for free in (10, 300, 600, 900, 1200):
        result, _ = run(value, **budget_for(value, total - free))
        if result.error is None and result.messages_removed:
            eff = effective(result.messages)
            assert pairing_issues(eff) == pairing_issues(effective(load(value)))
            assert not (eff[2].tool_results and not eff[1].tool_uses)


def test_the_last_pair_alone_cannot_be_truncated_so_it_degrades() -> None:
    value = [user("task"), assistant_call("t1"), results("t1", "q" * 20_000)]
    result, messages = run(value, **budget_for(value, 3_000))
    assert result.error is None
    assert result.messages_removed == 0 and result.truncation_id is None
    assert len(messages) == 3 and [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert len(result.degraded) == 1


def test_when_no_cut_fits_the_cut_that_lowers_most_then_degradation() -> None:
    value = [*conversation(4, size=400), assistant_call("last"), results("last", "L" * 40000)]
    result, messages = run(value, **budget_for(value, 2_000))
    assert result.error is None
    assert result.messages_removed == 8  # every earlier round trip: all but the first and the last pair
    assert [d.path for d in result.degraded] == [f"messages.{len(messages) - 1}.content.0.content"]
    assert result.new_context_tokens <= result.allowed


def test_id_factory_collisions_are_skipped() -> None:
    value = conversation(6)
    value[3]["condenseParent"] = "used"
    result, _messages = run(value, **budget_for(value, tokens_of(value) - 200), new_id=fixed_ids("used", "fresh"))
    assert result.truncation_id == "fresh"


def test_deterministic_with_a_fixed_id_factory() -> None:
    value = [*conversation(7, size=900), assistant_call("z"), results("z", "big " * 5000)]
    params = budget_for(value, 2_500)
    a, _ = run(value, **params, new_id=fixed_ids("same"))
    b, _ = run(value, **params, new_id=fixed_ids("same"))
    assert a == b and a.to_json() == b.to_json()


# -- degradation (rule 5 and the reference's choice) ----------------------------------------------


@pytest.mark.parametrize("which", ["fake", "zoo"])
@pytest.mark.parametrize("unit", ["s", " information", "x y "])
def test_block_just_above_the_floor_is_never_made_longer(which: str, unit: str) -> None:
    # " information" is one token per 12 characters: a 200-character prefix plus the notice has MORE
    # tokens than 300 such characters, though fewer characters (domain §3.7 reviewer finding 1, D10).
    counter = CharCounter() if which == "fake" else real_counter()
    for extra in (1, 20, 60, 80, 100, 150):
        text = (unit * 400)[: FLOOR_CHARS + extra]
        value = [user("task " * 200), assistant_call("t"), results("t", text)]
        result, messages = run(value, **budget_for(value, tokens_of(value, counter) - 5), counter=counter)
        for d in result.degraded:
            assert d.after_chars < d.before_chars and d.after_tokens < d.before_tokens
        new_block = cast(ToolResult, load(messages)[2].content[0])  # the results message of ``value``
        old_block = cast(ToolResult, load(value)[2].content[0])
        assert counter.raw_block(new_block) <= counter.raw_block(old_block)
        content = messages[2]["content"][0]["content"]
        assert len(content) <= len(text)
        if result.error is not None:
            assert messages == value
        elif content != text:
            assert counter.raw_block(new_block) < counter.raw_block(old_block)


def test_a_budget_below_the_floor_keeps_the_floor() -> None:
    text = "".join(f"{i:05d} " for i in range(2_000))  # 12,000 characters
    value = [user("task"), assistant_call("t"), results("t", text)]
    at_floor = [
        user("task"),
        assistant_call("t"),
        results("t", text[:FLOOR_CHARS] + notice_text(len(text) - FLOOR_CHARS)),
    ]
    # Room for exactly the floor plus notice: it fits, and the prefix is exactly the floor.
    fit, messages = run(value, **budget_for(value, tokens_of(at_floor)))
    assert fit.error is None
    assert messages[2]["content"][0]["content"] == at_floor[2]["content"][0]["content"]
    # Less room than that: the floor is never crossed, so recovery fails and changes nothing.
    short, messages = run(value, **budget_for(value, tokens_of(at_floor) - 3))
    assert short.error is not None and short.error.startswith(FAILED_PREFIX) and messages == value


def test_degraded_text_is_a_prefix_of_at_least_the_floor_plus_notice() -> None:
    text = "".join(f"line {i}: some output here\n" for i in range(3000))
    value = [user("task"), assistant_call("t"), results("t", text)]
    result, messages = run(value, **budget_for(value, 4_000))
    assert result.error is None
    new = messages[2]["content"][0]["content"]
    (d,) = result.degraded
    removed = len(text) - (len(new) - len(notice_text(len(text) - d.after_chars)))
    keep = len(text) - removed
    assert keep >= FLOOR_CHARS
    assert new == text[:keep] + notice_text(removed)
    assert d.before_chars == len(text) and d.after_chars == len(new)
    assert d.path == "messages.2.content.0.content"


def parallel_results(sizes: dict[str, int]) -> list[dict[str, Any]]:
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "read", "input": {}} for i in sizes]}
    res = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": i, "content": i * n} for i, n in sizes.items()],
    }
    return [user("task"), call, res]


def test_largest_first_and_stops_once_within_budget() -> None:
    value = parallel_results({"a": 8_000, "b": 30_000, "c": 1_000})
    total = tokens_of(value)
    one, _ = run(value, **budget_for(value, total - 3_000))  # cutting b alone is enough
    assert one.error is None
    assert [d.path for d in one.degraded] == ["messages.2.content.1.content"]
    both, messages = run(value, **budget_for(value, 1_200))  # b, then a: c never needs touching
    assert both.error is None
    assert [d.path for d in both.degraded] == ["messages.2.content.1.content", "messages.2.content.0.content"]
    assert messages[2]["content"][2] == value[2]["content"][2]
    assert both.new_context_tokens <= both.allowed


def test_array_content_changes_only_the_big_text_item() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    items = [
        {"type": "text", "text": "header"},
        image,
        {"type": "text", "text": "B" * 50_000},
        {"type": "text", "text": "footer"},
    ]
    value = [
        user("task"),
        assistant_call("t"),
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": items, "is_error": False, "cache": {"k": 1}},
                {"type": "text", "text": "after"},
            ],
            "ts": 5,
        },
    ]
    result, messages = run(value, **budget_for(value, 3_000))
    assert result.error is None
    new = messages[2]
    assert new["ts"] == 5 and new["content"][1] == {"type": "text", "text": "after"}
    block = new["content"][0]
    assert block["tool_use_id"] == "t" and block["is_error"] is False and block["cache"] == {"k": 1}
    assert list(block) == ["type", "tool_use_id", "content", "is_error", "cache"]
    got = block["content"]
    assert [got[0], got[1], got[3]] == [items[0], items[1], items[3]]
    assert got[2]["type"] == "text" and got[2]["text"].startswith("B" * FLOOR_CHARS)
    assert len(got[2]["text"]) < 50_000
    assert [d.path for d in result.degraded] == ["messages.2.content.0.content.2"]


def test_a_result_hidden_by_a_condensed_summary_is_never_degraded() -> None:
    value = [
        user("task", condenseParent="c1"),
        assistant_call("old", condenseParent="c1"),
        results("old", "H" * 100_000, condenseParent="c1"),
        {"role": "user", "content": "## Conversation Summary\nwhat happened", "isSummary": True, "condenseId": "c1"},
        assistant_call("new"),
        results("new", "V" * 20_000),
    ]
    result, messages = run(value, **budget_for(value, 2_000))
    assert result.error is None
    assert messages[2] == value[2]
    assert [d.path for d in result.degraded] == ["messages.5.content.0.content"]


def test_a_result_hidden_by_truncation_is_never_degraded() -> None:
    value = [
        user("task"),
        assistant_call("old", truncationParent="t0"),
        results("old", "H" * 100_000, truncationParent="t0"),
        user(
            "[Sliding window truncation: 2 messages hidden to reduce context]",
            isTruncationMarker=True,
            truncationId="t0",
        ),
        assistant_call("new"),
        results("new", "V" * 20_000),
    ]
    result, messages = run(value, **budget_for(value, 2_000))
    assert result.error is None and messages[2] == value[2]
    assert all("content.0.content" in d.path and d.path.startswith("messages.5") for d in result.degraded)


def test_images_and_ids_are_never_degraded_and_no_text_means_error() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 1_000_000}}
    value = [user("task"), assistant_call("t"), results("t", [image])]
    value[2]["content"].append(image)  # counts ceil(sqrt(len(data))) raw: 1000; nested, "[Image content]"
    assert tokens_of(value) > 1_500
    result, messages = run(value, **budget_for(value, 100))
    assert result.error is not None and result.error.startswith(FAILED_PREFIX)
    assert "removed 0 messages" in result.error
    assert messages == value and result.messages_removed == 0 and result.truncation_id is None
    assert result.new_context_tokens == result.prev_context_tokens


# -- errors (rules 6, 7, 8) -----------------------------------------------------------------------


def test_impossible_budget_is_a_controlled_error_with_messages_unchanged() -> None:
    value = [*conversation(5), assistant_call("big"), results("big", "x" * 50000)]
    value[0]["content"] = "a huge task description " * 2_000  # the first visible message can't be hidden
    result, messages = run(value, **budget_for(value, 1_000))
    assert result.error is not None and result.error.startswith(FAILED_PREFIX)
    assert messages == value
    assert result.messages == load(value)
    assert result.messages_removed == 0 and result.truncation_id is None and result.degraded == ()
    assert result.new_context_tokens == result.prev_context_tokens > result.allowed
    # The reason after the required prefix says how far the reference got (what a user debugging reads).
    assert f"tokens, over the {result.allowed} allowed (from {result.prev_context_tokens})" in result.error


def test_system_prompt_over_budget_is_a_controlled_error() -> None:
    value = conversation(3)
    result, messages = run(value, **budget_for(value, 100), system_prompt="s" * 10_000)
    assert result.error is not None and "system prompt" in result.error and messages == value


def test_result_json_has_the_contract_fields() -> None:
    value = conversation(6)
    result, _ = run(value, **budget_for(value, tokens_of(value) - 200))
    out = result.to_json()
    assert set(out) >= {"messages", "error", "messagesRemoved", "prevContextTokens", "newContextTokens", "truncationId"}
    assert out["error"] is None and out["truncationId"] == "trunc-1"
    assert isinstance(out["messagesRemoved"], int) and out["allowed"] == result.allowed
    json.dumps(out)


# -- the 4 MB case (one tool result of 4 MB) ----------------------------------------------------------


def mixed_text(size: int) -> str:
    parts = [
        "The quick brown fox jumps over the lazy dog. ",
        "def f(x):\n    return {'k': [x, x ** 2]}  # code\n",
        "日本語のテキストと絵文字 🚀🎉 ",
        "<|endoftext|> 1234567890 ",
        "a" * 300 + "\n",
        "Ünïcödé façade naïve café — “quotes” ",
    ]
    chunk = "".join(parts)
    return (chunk * (size // len(chunk) + 1))[:size]


def four_mb_case() -> list[dict[str, Any]]:
    return [
        user("Summarise the log file."),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_big", "name": "read_file", "input": {"path": "/var/log/big.log"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": mixed_text(4_000_000)}],
        },
    ]


@pytest.mark.parametrize("which", ["fake", "zoo"])
def test_four_megabyte_tool_result_recovers(which: str) -> None:
    counter = CharCounter() if which == "fake" else real_counter()
    value = four_mb_case()
    before = copy.deepcopy(value)
    result, messages = run(value, context_window=100_000, max_tokens=30_000, counter=counter)
    assert value == before
    assert result.error is None
    assert result.new_context_tokens <= result.allowed == 60_000 < result.prev_context_tokens
    assert result.new_context_tokens == recount(result, counter)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[:2] == before[:2]
    block = messages[2]["content"][0]
    assert list(block) == ["type", "tool_use_id", "content"] and block["tool_use_id"] == "toolu_big"
    assert isinstance(block["content"], str) and block["content"].endswith("fit the context budget]")
    assert before[2]["content"][0]["content"].startswith(block["content"].split("\n[Tool result truncated:")[0])
    # Using most of the room, not a tiny fraction of it.
    assert result.new_context_tokens > result.allowed * 0.8


def test_four_megabyte_case_counts_the_big_block_once() -> None:
    counter = CharCounter()
    value = four_mb_case()
    result, _ = run(value, context_window=100_000, max_tokens=30_000, counter=counter)
    assert result.error is None
    big = [n for n in counter.encoded if n > 1_000_000]
    assert len(big) == 1, "the 4 MB block was counted more than once"
    assert sum(counter.encoded) < 4_000_000 * 1.25


# -- command line ---------------------------------------------------------------------------------


def cli_run(args: list[str]) -> Any:
    from ctxmodel.cli import cli

    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_cli_recovers_and_writes_the_history(tmp_path: Path) -> None:
    pytest.importorskip("ctxmodel.cli.recovery")
    real_counter()
    src = tmp_path / "h.json"
    out = tmp_path / "out.json"
    src.write_text(json.dumps([*conversation(4, size=4000), assistant_call("z"), results("z", "big " * 20000)]))
    res = cli_run(["recover", str(src), "--context-window", "20000", "--max-tokens", "4000", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "allowed: 14000" in res.output and "hidden:" in res.output and "degraded" in res.output
    written = json.loads(out.read_text())
    assert any(m.get("isTruncationMarker") for m in written)


def test_cli_controlled_error_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    pytest.importorskip("ctxmodel.cli.recovery")
    real_counter()
    src = tmp_path / "h.json"
    out = tmp_path / "out.json"
    src.write_text(json.dumps([user("x" * 100_000)]))
    res = cli_run(["recover", str(src), "--context-window", "20000", "--max-tokens", "4000", "-o", str(out)])
    assert res.exit_code == 1
    assert FAILED_PREFIX in res.output and not out.exists()


def test_cli_stdout_output_is_clean_json(tmp_path: Path) -> None:
    pytest.importorskip("ctxmodel.cli.recovery")
    real_counter()
    src = tmp_path / "h.json"
    src.write_text(json.dumps(conversation(4, size=4_000)))
    res = CliRunner().invoke(
        __import__("ctxmodel.cli", fromlist=["cli"]).cli,
        ["recover", str(src), "--context-window", "10000", "--max-tokens", "2000", "-o", "-"],
    )
    assert res.exit_code == 0
    assert isinstance(json.loads(res.stdout), list)


def test_cli_input_errors_exit_2(tmp_path: Path) -> None:
    pytest.importorskip("ctxmodel.cli.recovery")
    from ctxmodel.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": null}]}]')
    with pytest.raises(SystemExit) as exc:
        main(["recover", str(bad), "--context-window", "1000", "--max-tokens", "1"])
    assert exc.value.code == 2


def test_a_first_visible_assistant_keeps_its_results() -> None:
    # A stored file may start with an assistant tool_use (a damaged or hand-made history): hiding its results
    # would leave the first message's call unanswered, so no cut is made and the big result is cut instead.
    value = [assistant_call("first"), results("first", "R" * 8_000), *conversation(3)[1:]]
    result, _ = run(value, **budget_for(value, tokens_of(value) - 100))
    assert result.error is None
    assert result.messages_removed == 0 and result.truncation_id is None
    assert [d.path for d in result.degraded] == ["messages.1.content.0.content"]
    assert pairing_issues(effective(result.messages)) == pairing_issues(effective(load(value)))


def test_no_cut_leaves_text_after_an_unresolved_server_tool_call() -> None:
    # After an unresolved server_tool_use only tool_result blocks may follow (domain §5.1): hiding the
    # results-only message would put the marker's text there, a violation the input did not have.
    from ctxmodel.oracle import validate

    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    value = [
        {"role": "assistant", "content": [server]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "z " * 500}]},
        assistant_call("a"),
        results("a", "y" * 8_000),
    ]
    result, _ = run(value, **budget_for(value, tokens_of(value) - 100))
    assert result.error is None
    assert result.messages_removed == 0
    assert [d.path for d in result.degraded] == ["messages.3.content.0.content"]
    before = {v.rule for v in validate(effective(load(value)))}
    assert "server-tool-pending" not in before
    assert {v.rule for v in validate(effective(result.messages))} <= before


def test_a_cut_that_would_add_tokens_is_skipped_for_the_next_block() -> None:
    # The largest block is token-dense-free (" information": 12 characters a token), so cutting it to
    # the floor plus the notice would ADD tokens: it is skipped, and the next block is cut instead.
    counter = real_counter()
    value = parallel_results({"a": 1, "b": 1})
    value[2]["content"][0]["content"] = (" information" * 40)[:350]
    value[2]["content"][1]["content"] = ("x y " * 100)[:340]
    result, messages = run(value, **budget_for(value, tokens_of(value, counter) - 40), counter=counter)
    assert result.error is None
    assert [d.path for d in result.degraded] == ["messages.2.content.1.content"]
    assert messages[2]["content"][0] == value[2]["content"][0]


@pytest.mark.parametrize("over", [5, 20])
def test_a_dense_tail_slightly_over_budget_is_degraded_not_given_up(over: int) -> None:
    """Emoji free their tokens in fewer characters than the notice adds: the first cut came out longer
    than the text and the reference gave up (a §4.8 "gave up where recovery was possible" of its own)."""
    counter = real_counter()
    text = "The quick brown fox jumps over the lazy dog. " * 60 + "😀🎉🚀✨" * 300
    value = [user("task"), assistant_call("a"), results("a", text)]
    allowed = counter.count_messages(load(value)) - over
    window = math.ceil((allowed + 1000) * 10 / 9)
    while allowed_tokens(window, 1000) > allowed:
        window -= 1
    result = recover(load(value), context_window=window, max_tokens=1000, counter=counter)
    assert result.error is None and result.new_context_tokens <= allowed_tokens(window, 1000)
    assert len(result.degraded) == 1
    new_text = dump(result.messages)[2]["content"][0]["content"]
    assert len(new_text) < len(text) and new_text.startswith(text[:200])


def test_an_old_marker_holding_results_keeps_its_tool_use_visible() -> None:
    """An old marker is never tagged, so a cut that hides the ``tool_use`` whose results a visible old
    marker holds orphans them (contract §4 rule 4), even when another marker follows it (the neighbour
    the straddle test must not read instead)."""
    from ctxmodel.oracle import validate

    value = [
        user("the task"),
        {"role": "assistant",
         "content": [{"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"p": "x" * 4000}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}],
         "isTruncationMarker": True, "truncationId": "old-1"},
        {"role": "user", "content": marker_text(1), "isTruncationMarker": True, "truncationId": "old-2"},
        {"role": "assistant", "content": "next"},
        user("more " + "m" * 40),
        {"role": "assistant", "content": "done"},
        user("last"),
    ]
    assert validate(effective(load(value))) == []
    result, _ = run(value, **budget_for(value, CharCounter().count_messages(effective(load(value))) - 600))
    assert "truncationParent" not in dump(result.messages)[1]
    assert validate(effective(result.messages)) == []
