"""Domain features of a generated input: the "virtual branches" a campaign schedules on.

Hypothesis ``event()`` calls in the checks tell us about behaviour; these tell us about the input
itself — which block kinds, metadata and pairing shapes (domain §1, §7 A) an example exercised —
so the report can say what was covered, and the scheduler gives more time to a property whose
inputs still reach new shapes. Computed from the observation's JSON
arguments, never from the target, so it costs no call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["features_of"]

_META = {
    "isSummary": "meta:summary",
    "isTruncationMarker": "meta:marker",
    "condenseParent": "meta:condenseParent",
    "truncationParent": "meta:truncationParent",
}


def _histories(value: Any, depth: int = 0) -> Iterator[list[Any]]:
    """Every ``messages`` list in the arguments (the params of any op carry one there)."""
    if depth > 3:
        return
    if isinstance(value, dict):
        messages = value.get("messages")
        if isinstance(messages, list):
            yield messages
        for key, item in value.items():
            if key != "messages":
                yield from _histories(item, depth + 1)
    elif isinstance(value, list) and depth == 0:
        for item in value:
            yield from _histories(item, depth + 1)


def _size(n: int) -> str:
    if n == 0:
        return "messages:0"
    if n <= 3:
        return "messages:1-3"
    if n <= 15:
        return "messages:4-15"
    return "messages:16+"


def features_of(arguments: Any) -> set[str]:
    out: set[str] = set()
    for messages in _histories(arguments):
        out.add(_size(len(messages)))
        seen_uses: set[str] = set()
        previous_uses: set[str] = set()
        for message in messages:
            if not isinstance(message, dict):
                out.add("shape:not-an-object")
                continue
            for key, name in _META.items():
                if message.get(key) not in (None, False):
                    out.add(name)
            content = message.get("content")
            if isinstance(content, str):
                out.add("content:string")
                previous_uses = set()
                continue
            if not isinstance(content, list):
                continue
            uses: set[str] = set()
            leading = True
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                out.add(f"block:{kind}" if kind in _KINDS else "block:other")
                if kind == "tool_use" and isinstance(block, dict):
                    tid = block.get("id")
                    if isinstance(tid, str):
                        if tid in seen_uses or tid in uses:
                            out.add("pairing:duplicate-tool-use")
                        uses.add(tid)
                elif kind == "tool_result" and isinstance(block, dict):
                    if not leading:
                        out.add("pairing:result-after-other-block")
                    if block.get("tool_use_id") not in previous_uses:
                        out.add("pairing:orphan-result")
                    if isinstance(block.get("content"), list):
                        out.add("tool_result:list-content")
                    if block.get("is_error") is True:
                        out.add("tool_result:is_error")
                else:
                    leading = False
            if len(uses) > 1:
                out.add("pairing:parallel-tool-uses")
            seen_uses |= uses
            previous_uses = uses if message.get("role") == "assistant" else set()
    return out


_KINDS = frozenset({"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "document"})
