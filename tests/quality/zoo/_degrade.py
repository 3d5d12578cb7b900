"""Zoo-Code PR #1617's in-place degradation of tool results (domain §3.7), with its known pitfalls as switches.

``shrink_recover`` never hides messages: it cuts visible textual tool-result texts to a prefix plus a
notice until the request fits, else returns a controlled error with the input unchanged. With the
defaults it is correct (contract §4 rules 5, 6, 8); the zoo's degradation bugs flip one switch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ctxmodel import codec
from tests.quality.zoo._common import allowed_for, controlled_error, recount, visible_flags

Msg = dict[str, Any]
FLOOR = 200


def notice(removed: int) -> str:
    return f"\n[Tool result truncated: {removed} characters removed to fit the context budget]"


def _block_tokens(block: dict[str, Any]) -> int:
    from ctxmodel.tokens import get_counter

    counter = get_counter("zoo")
    return int(counter.count_blocks([codec.load_block(block, "block")]))


def _texts(msgs: list[Msg], flags: list[bool]) -> list[tuple[int, int, int | None]]:
    """(message, block, item or None) of every textual tool-result text in flagged messages, in order."""
    out: list[tuple[int, int, int | None]] = []
    for i, m in enumerate(msgs):
        content = m.get("content")
        if not flags[i] or not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                out.append((i, b, None))
            elif isinstance(inner, list):
                out.extend((i, b, k) for k, item in enumerate(inner) if item.get("type") == "text")
    return out


def _get(block: dict[str, Any], item: int | None) -> str:
    text = block["content"] if item is None else block["content"][item]["text"]
    assert isinstance(text, str)
    return text


def _put(block: dict[str, Any], item: int | None, text: str) -> dict[str, Any]:
    if item is None:
        return dict(block, content=text)
    items = list(block["content"])
    items[item] = dict(items[item], text=text)
    return dict(block, content=items)


def shrink_recover(
    params: dict[str, Any],
    *,
    candidates: Callable[[list[Msg]], list[bool]] = visible_flags,
    count: Callable[[list[Msg], str], int] = recount,
    largest_first: bool = True,
    must_shrink: bool = True,
) -> dict[str, Any]:
    allowed = allowed_for(params)
    if allowed <= 0:
        return controlled_error(params, f"allowed = {allowed} tokens")
    msgs: list[Msg] = codec.copy_json(params["messages"])
    system = params.get("systemPrompt", "")
    prev = count(msgs, system)
    if prev <= allowed:
        return {"messages": msgs, "error": None, "messagesRemoved": 0, "prevContextTokens": prev,
                "newContextTokens": prev, "truncationId": None}
    units = _texts(msgs, candidates(msgs))
    if largest_first:
        units.sort(key=lambda u: -len(_get(msgs[u[0]]["content"][u[1]], u[2])))
    changed = False
    for i, b, item in units:
        remaining = count(msgs, system) - allowed
        if remaining <= 0:
            break
        block = msgs[i]["content"][b]
        text = _get(block, item)
        if len(text) <= FLOOR:
            continue
        tokens = _block_tokens(block)
        chars_per_token = len(text) / max(tokens, 1)
        keep = max(FLOOR, math.floor(max(tokens - remaining, 1) * chars_per_token))
        if keep >= len(text):
            continue
        new_block = _put(block, item, text[:keep] + notice(len(text) - keep))
        if must_shrink and (
            len(_get(new_block, item)) >= len(text) or _block_tokens(new_block) >= tokens
        ):
            continue
        content = list(msgs[i]["content"])
        content[b] = new_block
        msgs[i] = dict(msgs[i], content=content)
        changed = True
    new = count(msgs, system)
    if not changed or new > allowed:
        return controlled_error(params, f"shrinking tool results leaves {new} tokens over the {allowed} allowed")
    return {"messages": msgs, "error": None, "messagesRemoved": 0, "prevContextTokens": prev,
            "newContextTokens": new, "truncationId": None}
