"""The reference's count of Bedrock Converse messages (contract §10 "Reference choices").

A Converse trimmer fits its budget by its own counter, as a Chat or Responses one does, so the
reference needs one for these messages too. It counts what the model reads with the encodings and
the fudge of the other counters (once per call, rounded up; contract §5), the system prompt (the
request's ``system``, apart from the messages) included when given: a ``text`` block's text; an
``image`` block as an image (``ceil(sqrt(len(bytes)))`` for inline bytes, else 300: domain §4.6);
a ``toolUse`` as ``Tool: NAME`` and ``Arguments: INPUT`` on two lines (the input as compact JSON);
a ``toolResult`` as ``Tool Result (ID)`` and its content (``text`` items as text, ``json`` ones as
compact JSON, images as images); a ``reasoningContent`` block as its reasoning text and signature,
or its redacted content (the provider bills the reasoning it is handed back); any other block as
its compact JSON (``cachePoint`` included: it is sent). Roles and ids count nothing. Every piece is a
non-negative count added to a sum, so adding a message never lowers the count.

It reads any JSON value without raising: a message of another shape counts what it holds of these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ctxmodel.tokens.counter import IMAGE_OTHER_TOKENS, Counter

__all__ = ["count_converse", "raw_converse_message"]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _image(image: Any) -> int:
    source = image.get("source") if isinstance(image, Mapping) else None
    data = source.get("bytes") if isinstance(source, Mapping) else None
    if not isinstance(data, str) or not data:
        return IMAGE_OTHER_TOKENS
    return math.isqrt(len(data) - 1) + 1


def _reasoning(counter: Counter, value: Any) -> int:
    if not isinstance(value, Mapping):
        return counter.raw_text(_compact(value))
    total = 0
    text = value.get("reasoningText")
    if isinstance(text, Mapping):
        for key in ("text", "signature"):
            if isinstance(text.get(key), str):
                total += counter.raw_text(text[key])
    redacted = value.get("redactedContent")
    if isinstance(redacted, str):
        total += counter.raw_text(redacted)
    return total


def _result(counter: Counter, value: Any) -> int:
    if not isinstance(value, Mapping):
        return counter.raw_text(_compact(value))
    tool_id = value.get("toolUseId")
    total = counter.raw_text(f"Tool Result ({tool_id if isinstance(tool_id, str) else ''})\n")
    content = value.get("content")
    for item in content if isinstance(content, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("text"), str):
            total += counter.raw_text(item["text"])
        elif isinstance(item, Mapping) and "image" in item:
            total += _image(item["image"])
        elif isinstance(item, Mapping) and "json" in item:
            total += counter.raw_text(_compact(item["json"]))
        else:
            total += counter.raw_text(_compact(item))
    return total


def _block(counter: Counter, block: Any) -> int:
    if not isinstance(block, Mapping):
        return counter.raw_text(_compact(block))
    if isinstance(block.get("text"), str):
        return counter.raw_text(block["text"])
    if "image" in block:
        return _image(block["image"])
    use = block.get("toolUse")
    if isinstance(use, Mapping):
        name = use.get("name")
        return counter.raw_text(f"Tool: {name if isinstance(name, str) else _compact(name)}\n"
                                f"Arguments: {_compact(use.get('input'))}")
    if "toolResult" in block:
        return _result(counter, block["toolResult"])
    if "reasoningContent" in block:
        return _reasoning(counter, block["reasoningContent"])
    return counter.raw_text(_compact(block))


def raw_converse_message(counter: Counter, message: Any) -> int:
    """Raw tokens of one message, without the fudge."""
    if not isinstance(message, Mapping):
        return 0
    content = message.get("content")
    if isinstance(content, str):
        return counter.raw_text(content)
    return sum(_block(counter, b) for b in content) if isinstance(content, list) else 0


def count_converse(counter: Counter, messages: Iterable[Any], system: str = "") -> int:
    """All messages in one call with the system prompt, the fudge applied once (contract §5)."""
    prompt = counter.raw_text(system) if system else 0
    return counter.fudged(prompt + sum(raw_converse_message(counter, m) for m in messages))
