"""JavaScript's ``JSON.stringify(JSON.parse(json))``, for the ``tool_use`` token rule (contract §5).

The agents count a ``tool_use`` block as ``"Tool: {name}\\nArguments: {JSON.stringify(input)}"``
(domain §4.6), so to count what they count we must print ``input`` exactly as V8 does, not as
Python's ``json.dumps`` does. The differences that change token counts (domain §4.6, D8):

- numbers are doubles: ``1.0`` prints ``1``, ``1e21`` prints ``1e+21``, ``1e-7`` prints ``1e-7``,
  ``-0`` prints ``0``, integers beyond 2**53 print the nearest double, and a literal too large for
  a double (``1e400``) is ``Infinity``, which ``JSON.stringify`` prints as ``null``;
- integer-like keys (canonical array indices "0".."4294967294") come first in ascending numeric
  order, then the other keys in insertion order (ECMA-262 OrdinaryOwnPropertyKeys);
- strings escape only ``"``, ``\\``, control characters below U+0020 (short forms ``\\b \\f \\n \\r \\t``,
  else ``\\u00XX``) and lone surrogates (``\\udXXX``, lowercase hex, ECMA-262 QuoteJSONString);
  everything else, non-ASCII included, is written raw.

The value is a Python JSON value as ``json.loads`` returns it (what ``ctxmodel.codec`` stores):
Python keeps duplicate keys the way ``JSON.parse`` does (last value, first position), so only the
layout needs translating. Iterative, so nesting depth never raises.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["js_number", "js_string", "js_stringify"]

_MAX_SAFE = 2**53
_INDEX_KEY = re.compile(r"0|[1-9][0-9]{0,9}")
_MAX_INDEX = 2**32 - 2
_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: int | float) -> str:
    """A number as ``JSON.stringify`` prints it (Number::toString, ECMA-262 §6.1.6.1.20).

    Both JavaScript and Python pick the shortest digit string that round-trips to the double, so
    ``repr`` supplies the digits and only the layout (where the point and exponent go) differs.
    """
    if isinstance(value, int):
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return str(value)
        try:
            value = float(value)  # correctly rounded, ties to even: what JSON.parse does
        except OverflowError:
            return "null"  # JSON.parse gives ±Infinity, which JSON.stringify prints as null
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"  # -0 included
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)  # n of the spec: value = 0.digits * 10**point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mark = "+" if e >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{head}e{mark}{abs(e)}"


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def js_string(value: str) -> str:
    """A string as ``JSON.stringify`` quotes it (QuoteJSONString, ECMA-262 §25.5.2.3).

    Python's ``json.dumps(ensure_ascii=False)`` escapes the same set below U+0020 with the same
    short forms and lowercase hex; it leaves surrogates raw, where JavaScript escapes lone ones.
    A high surrogate followed by a low one is one character to JavaScript (it sees UTF-16), so
    such pairs are joined first and only what is left alone gets escaped.
    """
    out = json.dumps(value, ensure_ascii=False)
    if _SURROGATE.search(out) is None:
        return out
    joined = out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(_escape_surrogate, joined)


def _ordered_keys(obj: dict[str, Any]) -> list[str]:
    """Integer-like keys first, ascending, then the rest in insertion order (OrdinaryOwnPropertyKeys)."""
    index: list[tuple[int, str]] = []
    other: list[str] = []
    for key in obj:
        if _INDEX_KEY.fullmatch(key) and int(key) <= _MAX_INDEX:
            index.append((int(key), key))
        else:
            other.append(key)
    if not index:
        return other
    index.sort()
    return [k for _, k in index] + other


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, int | float):
        return js_number(value)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` with no indentation, for a JSON value as ``json.loads`` builds it.

    Lists and tuples are arrays; dicts (and other mappings) are objects with string keys.
    Raises ``TypeError`` for anything else, as ``JSON.stringify`` has no answer for it either.
    """
    out: list[str] = []
    # A stack of pending work: a value to write, or a literal string (closing bracket, comma).
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, item = stack.pop()
        if literal:
            out.append(item)
            continue
        if isinstance(item, dict):
            keys = _ordered_keys(item)
            out.append("{")
            stack.append((True, "}"))
            for pos in range(len(keys) - 1, -1, -1):
                key = keys[pos]
                stack.append((False, item[key]))
                stack.append((True, ("," if pos else "") + js_string(key) + ":"))
        elif isinstance(item, list | tuple):
            out.append("[")
            stack.append((True, "]"))
            for pos in range(len(item) - 1, -1, -1):
                stack.append((False, item[pos]))
                if pos:
                    stack.append((True, ","))
        elif hasattr(item, "items") and hasattr(item, "keys"):
            stack.append((False, dict(item.items())))
        else:
            out.append(_scalar(item))
    return "".join(out)
