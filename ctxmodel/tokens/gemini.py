"""The reference's count of Gemini ``contents`` (contract §10 "Reference choices").

A Gemini trimmer fits its budget by its own counter, as the other dialects' trimmers do, so the
reference needs one for contents too. It counts what the model reads with the encodings and the
fudge of the other counters (once per call, rounded up; contract §5), the system instruction (the
request's ``systemInstruction``, apart from the contents) included when given: a ``text`` part's
text (a thought summary too: the model is handed it back); an ``inlineData`` part as an image
(``ceil(sqrt(len(data)))``) and a ``fileData`` part as 300 (domain §4.6); a ``functionCall`` as
``Tool: NAME`` and ``Arguments: ARGS`` on two lines (the args as compact JSON); a
``functionResponse`` as ``Tool Result (NAME)`` and its response as compact JSON; a part's
``thoughtSignature`` as its text (it is sent); any other part as its compact JSON. Roles and ids
count nothing. Both spellings are read (``functionCall``, ``function_call``). Every piece is a
non-negative count added to a sum, so adding a content never lowers the count.

It reads any JSON value without raising: a content of another shape counts what it holds of these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ctxmodel.tokens.counter import IMAGE_OTHER_TOKENS, Counter

__all__ = ["count_gemini", "raw_gemini_content"]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _get(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    return part[camel] if camel in part else part.get(snake)


def _part(counter: Counter, part: Any) -> int:
    if not isinstance(part, Mapping):
        return counter.raw_text(_compact(part))
    signature = _get(part, "thoughtSignature", "thought_signature")
    total = counter.raw_text(signature) if isinstance(signature, str) else 0
    call = _get(part, "functionCall", "function_call")
    response = _get(part, "functionResponse", "function_response")
    inline = _get(part, "inlineData", "inline_data")
    if isinstance(part.get("text"), str):
        return total + counter.raw_text(part["text"])
    if isinstance(call, Mapping):
        name = call.get("name")
        return total + counter.raw_text(f"Tool: {name if isinstance(name, str) else _compact(name)}\n"
                                        f"Arguments: {_compact(call.get('args'))}")
    if isinstance(response, Mapping):
        name = response.get("name")
        head = counter.raw_text(f"Tool Result ({name if isinstance(name, str) else ''})\n")
        return total + head + counter.raw_text(_compact(response.get("response")))
    if isinstance(inline, Mapping):
        data = inline.get("data")
        return total + (math.isqrt(len(data) - 1) + 1 if isinstance(data, str) and data else IMAGE_OTHER_TOKENS)
    if _get(part, "fileData", "file_data") is not None:
        return total + IMAGE_OTHER_TOKENS
    rest = {k: v for k, v in part.items() if k not in ("thoughtSignature", "thought_signature")}
    return total + (counter.raw_text(_compact(rest)) if rest else 0)


def raw_gemini_content(counter: Counter, content: Any) -> int:
    """Raw tokens of one content, without the fudge."""
    if not isinstance(content, Mapping):
        return 0
    parts = content.get("parts")
    return sum(_part(counter, p) for p in parts) if isinstance(parts, list) else 0


def count_gemini(counter: Counter, contents: Iterable[Any], system: str = "") -> int:
    """All contents in one call with the system instruction, the fudge applied once (contract §5)."""
    prompt = counter.raw_text(system) if system else 0
    return counter.fudged(prompt + sum(raw_gemini_content(counter, c) for c in contents))
