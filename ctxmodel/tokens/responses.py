"""The reference's count of OpenAI Responses ``input`` items (contract §10 "Reference choices").

A Responses trimmer fits its budget by its own counter, as a Chat one does, so the reference needs one
for these items too. It counts what the model reads with the encodings and the fudge of the other
counters (once per call, rounded up; contract §5): a message's text (a string, or each ``input_text``,
``output_text``, ``refusal`` part), an ``input_image`` as an image (``ceil(sqrt(len(url)))`` for a
``data:`` URL, else 300: domain §4.6), any other part as its compact JSON; a ``function_call`` as
``Tool: NAME`` and ``Arguments: ARGUMENTS`` on two lines; a ``function_call_output`` as
``Tool Result (CALL_ID)`` and its output; a ``reasoning`` item as its summary and content texts and its
``encrypted_content`` (the provider bills the reasoning it is handed back, so a trimmer that keeps it
pays for it); an item of another type as its compact JSON. Ids, roles and status count nothing.
Every piece is a non-negative count added to a sum, so adding an item never lowers the count.

It reads any JSON value without raising: an item of another shape counts what it holds of these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ctxmodel.tokens.counter import IMAGE_OTHER_TOKENS, Counter

__all__ = ["count_responses", "raw_responses_item"]

_TEXT_PARTS = ("input_text", "output_text", "summary_text", "reasoning_text", "text")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _image(part: Mapping[str, Any]) -> int:
    url = part.get("image_url")
    if not isinstance(url, str) or not url.startswith("data:"):
        return IMAGE_OTHER_TOKENS
    return math.isqrt(len(url) - 1) + 1


def _parts(counter: Counter, content: Any) -> int:
    if isinstance(content, str):
        return counter.raw_text(content)
    if not isinstance(content, list):
        return 0 if content is None else counter.raw_text(_compact(content))
    total = 0
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if isinstance(part, Mapping) and kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            total += counter.raw_text(part["text"])
        elif isinstance(part, Mapping) and kind == "refusal" and isinstance(part.get("refusal"), str):
            total += counter.raw_text(part["refusal"])
        elif isinstance(part, Mapping) and kind == "input_image":
            total += _image(part)
        elif isinstance(part, str):
            total += counter.raw_text(part)
        else:
            total += counter.raw_text(_compact(part))
    return total


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _compact(value)


def raw_responses_item(counter: Counter, item: Any) -> int:
    """Raw tokens of one item, without the fudge."""
    if not isinstance(item, Mapping):
        return 0
    kind = item.get("type", "message")
    if kind == "message":
        return _parts(counter, item.get("content"))
    if kind == "function_call":
        return counter.raw_text(f"Tool: {_text(item.get('name'))}\nArguments: {_text(item.get('arguments'))}")
    if kind == "function_call_output":
        call_id = item.get("call_id")
        head = counter.raw_text(f"Tool Result ({call_id if isinstance(call_id, str) else ''})\n")
        return head + _parts(counter, item.get("output"))
    if kind == "reasoning":
        encrypted = item.get("encrypted_content")
        total = _parts(counter, item.get("summary")) + _parts(counter, item.get("content"))
        return total + (counter.raw_text(encrypted) if isinstance(encrypted, str) else 0)
    return counter.raw_text(_compact({k: v for k, v in item.items() if k not in ("id", "status")}))


def count_responses(counter: Counter, items: Iterable[Any]) -> int:
    """All items in one call, the fudge applied once (contract §5's rule for a call)."""
    return counter.fudged(sum(raw_responses_item(counter, i) for i in items))
