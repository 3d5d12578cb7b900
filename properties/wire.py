"""The wire, judged: what a target sends must be a body the API can parse (domain §5.6, §5.1).

A string holding half of a UTF-16 surrogate pair is a 400 before any rule of the API is read. Such a
half is made by exactly the code the gate judges: a JavaScript degradation, truncation or partial trim
that cuts a text with ``slice(0, n)`` at a count of code units splits an emoji's pair. So every op's
output is judged for the lone surrogates *it introduced*: one the input already held is the caller's
(a target may pass it on), one it created is its bug.

"Introduced" is read by content, not by position, so that a text that moved (a marker inserted
before it, a result converted to text behind a prefix) keeps its own: a lone surrogate of the output
is inherited when the input holds the same half with the same neighbours on one side (up to
``_CONTEXT`` code points before it, or after it). A cut leaves the half at a new edge of its text
(the end, or before the notice a target appends), so neither side matches the input, where the half
was followed by its pair.

The yardstick reads the strings itself (UTF-16 halves from the code points Python holds); the API's
texts and places are the oracle's (``ctxmodel.oracle``), which the request properties judge with.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from ctxmodel.properties.catalogue import Finding

__all__ = ["Half", "halves", "introduced", "introduced_findings", "judged_request"]

#: Code points of context on each side that identify a half across a move.
_CONTEXT = 8
_SURROGATE = re.compile("[\ud800-\udfff]")


@attrs.frozen
class Half:
    """One lone surrogate: the JSON path of its string (a key's own path for a key), its UTF-16
    offset in that string, and its neighbours (``left`` ends with it, ``right`` starts with it)."""

    path: str
    unit: int
    left: str
    right: str


def _string_halves(text: str, path: str) -> Iterator[Half]:
    units = 0
    i, n = 0, len(text)
    while i < n:
        c = ord(text[i])
        if 0xD800 <= c <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            i, units = i + 2, units + 2  # two code points that are one pair on the wire
            continue
        if 0xD800 <= c <= 0xDFFF:
            yield Half(path, units, text[max(0, i - _CONTEXT) : i + 1], text[i : i + 1 + _CONTEXT])
        units += 2 if c > 0xFFFF else 1
        i += 1


def halves(value: Any, path: str = "") -> Iterator[Half]:
    """Every lone surrogate in a JSON value: strings, keys, at any depth."""
    if isinstance(value, str):
        if _SURROGATE.search(value) is not None:
            yield from _string_halves(value, path)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            yield from halves(str(key), inner)
            yield from halves(item, inner)
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            yield from halves(item, f"{path}.{n}" if path else str(n))


def _side(a: str, b: str, match: Any) -> bool:
    """Two neighbourhoods agree on one side: the shorter one (cut short by its string's edge) is the
    longer's end (left) or start (right), and is more than the half alone unless both are."""
    short, long_ = sorted((a, b), key=len)
    return bool(match(long_, short)) and (len(short) > 1 or len(long_) == 1)


def introduced(before: Any, after: Any, root: str = "messages") -> list[Half]:
    """The lone surrogates of ``after`` that ``before`` did not hold (module docstring)."""
    found = list(halves(after, root))
    if not found:
        return []
    held = list(halves(before, root))
    return [h for h in found if not any(_side(h.left, o.left, str.endswith) or _side(h.right, o.right, str.startswith)
                                        for o in held)]


def _shown(half: Half) -> str:
    code = ord(half.right[0])
    kind = "high" if code <= 0xDBFF else "low"
    return f"{half.path}: a lone {kind} surrogate \\u{code:04x} at UTF-16 offset {half.unit}"


def introduced_findings(before: Any, after: Any, what: str) -> Iterator[Finding]:
    """One failure (code ``lone-surrogate``) when ``after`` holds a lone surrogate ``before`` did not."""
    new = introduced(before, after)
    if new:
        more = f" (and {len(new) - 1} more)" if len(new) > 1 else ""
        yield Finding.fail(
            f"{what} holds half of a surrogate pair the input did not: {_shown(new[0])}{more}; the API answers "
            "400 `The request body is not valid JSON: ...` (a cut by UTF-16 code units splits a pair)",
            "no lone surrogate the input did not hold: cut text by code points, never between a pair's halves "
            "(domain §5.6)",
            code="lone-surrogate",
        )


def _has_content(msg: Mapping[str, Any]) -> bool:
    """A message with something the API takes as content: text that is not blank, or any block other
    than a text, a thinking block or an agent's reasoning (which a correct request may drop)."""
    content = msg.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, Mapping):
            return True
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                return True
        elif kind not in ("thinking", "redacted_thinking", "reasoning"):
            return True
    return False


def judged_request(history: Sequence[Mapping[str, Any]], request: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The oracle's violations of the request a target built from ``history``, less what the caller
    brought: a lone surrogate ``history`` already held, and an empty request when ``history`` had
    nothing the API takes as content (the request of nothing is nothing, domain §5.1)."""
    from ctxmodel import codec
    from ctxmodel.oracle import validate

    violations = validate(codec.load(list(request)))
    if not violations:
        return violations
    kept_paths = {h.path for h in introduced(list(history), list(request))}
    caller_empty = not any(isinstance(m, Mapping) and _has_content(m) for m in history)
    out = []
    for v in violations:
        if v.rule == "lone-surrogate" and v.path not in kept_paths:
            continue
        if v.rule == "empty-messages" and caller_empty:
            continue
        out.append(v)
    return out
