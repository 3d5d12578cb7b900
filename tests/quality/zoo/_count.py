"""The zoo counter (contract §5) at the JSON level, with a per-block hook for the counting bugs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmodel import codec


def count_with(params: dict[str, Any], raw_block: Callable[[dict[str, Any]], int] | None = None) -> int:
    """``count_text(systemPrompt) + count_messages(messages)``, each fudged once (1.5, rounded up)."""
    from ctxmodel.tokens import get_counter

    counter = get_counter("zoo")
    system = params.get("systemPrompt", "")
    total = 0
    for message in codec.copy_json(params["messages"]):
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in items:
            if raw_block is not None:
                total += raw_block(block)
            else:
                total += counter.raw_block(codec.load_block(block, "block"))
    return int(counter.count_text(system)) + int(counter.fudged(total))


def default_raw(block: dict[str, Any]) -> int:
    from ctxmodel.tokens import get_counter

    return int(get_counter("zoo").raw_block(codec.load_block(block, "block")))
