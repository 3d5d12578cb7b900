"""The reference's count of Chat Completions messages (contract §10 "Reference choices").

A trimmer fits its budget by its own counter, so the reference needs one for the OpenAI dialect too.
It counts what the model reads, with the same encodings and the same fudge as the Anthropic counter
(once per call, rounded up; contract §5): every text of ``content`` (a string, or each ``text`` part),
an ``image_url`` part as an image (``ceil(sqrt(len(url)))`` for a ``data:`` URL, else 300, as
domain §4.6 counts inline and linked images), any other part as its compact JSON, each tool call as
``Tool: NAME`` and ``Arguments: ARGUMENTS`` on two lines (the arguments string as sent), a ``tool``
message's content like any other, and a ``refusal`` text. Roles, ids and unknown keys count nothing.
Every piece is a non-negative count added to a sum, so adding a message never lowers the count.

It reads any JSON value without raising: a message of another shape counts what it holds of these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ctxmodel.tokens.counter import IMAGE_OTHER_TOKENS, Counter

__all__ = ["count_chat", "raw_chat_message"]


def _image(part: Mapping[str, Any]) -> int:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    if not isinstance(url, str) or not url.startswith("data:"):
        return IMAGE_OTHER_TOKENS
    return math.isqrt(len(url) - 1) + 1


def _content(counter: Counter, content: Any) -> int:
    if isinstance(content, str):
        return counter.raw_text(content)
    if not isinstance(content, list):
        return 0
    total = 0
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            total += counter.raw_text(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            total += _image(part)
        elif isinstance(part, str):
            total += counter.raw_text(part)
        else:
            total += counter.raw_text(json.dumps(part, ensure_ascii=False, separators=(",", ":"), default=str))
    return total


def _call_text(call: Any) -> str:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return json.dumps(call, ensure_ascii=False, separators=(",", ":"), default=str)
    name, arguments = function.get("name"), function.get("arguments")
    name_text = name if isinstance(name, str) else json.dumps(name, default=str)
    arguments_text = arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)
    return f"Tool: {name_text}\nArguments: {arguments_text}"


def raw_chat_message(counter: Counter, message: Any) -> int:
    """Raw tokens of one message, without the fudge."""
    if not isinstance(message, Mapping):
        return 0
    total = _content(counter, message.get("content"))
    if isinstance(message.get("refusal"), str):
        total += counter.raw_text(message["refusal"])
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        total += counter.raw_text(_call_text(call))
    return total


def count_chat(counter: Counter, messages: Iterable[Any]) -> int:
    """All messages in one call, the fudge applied once (contract §5's rule for a call)."""
    return counter.fudged(sum(raw_chat_message(counter, m) for m in messages))
