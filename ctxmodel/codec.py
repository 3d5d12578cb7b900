"""The lossless codec between stored-history JSON and the model (contract §1).

``dump(load(x)) == x`` for every history of the stored format: unknown keys and unknown block types
ride along untouched. Anything that is not of that shape is refused with one line naming the JSON
path (``messages.3.content.1.tool_use_id: expected a string, got null``), because users debug a
400 from a real file and need to be told where, not shown a traceback.

Copying: ``load`` copies nested JSON values so the model never aliases the caller's objects, and
``dump`` copies them out so the caller can never reach into the model. ``loads``/``dumps`` skip
those copies: the values they see are fresh from the parser or go straight to the serializer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO, NoReturn

from ctxmodel.errors import HistoryError
from ctxmodel.model import (
    EMPTY,
    Block,
    History,
    Image,
    Message,
    Opaque,
    RedactedThinking,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)

__all__ = [
    "copy_json",
    "dump",
    "dump_block",
    "dump_message",
    "dumps",
    "load",
    "load_block",
    "load_message",
    "loads",
    "read",
    "write",
]

_MESSAGE_KEYS = frozenset({"role", "content"})
#: Metadata keys whose type we check, because visibility (contract §2) reads them.
_META_TYPES: dict[str, tuple[type, ...]] = {
    "isSummary": (bool,),
    "isTruncationMarker": (bool,),
    "condenseId": (str, type(None)),
    "condenseParent": (str, type(None)),
    "truncationId": (str, type(None)),
    "truncationParent": (str, type(None)),
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _fail(path: str, expected: str, value: Any) -> NoReturn:
    raise HistoryError(path, f"expected {expected}, got {_kind(value)}")


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (containers only: strings and numbers are immutable)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def _check_json(value: Any, path: str) -> None:
    """Refuse values no JSON document can hold (NaN, tuples, objects) so dumps stays strict."""
    if isinstance(value, str | bool) or value is None:
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise HistoryError(path, "expected a finite number, got NaN or Infinity")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise HistoryError(path, f"expected string object keys, got {_kind(k)}")
            _check_json(v, f"{path}.{k}")
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            _check_json(v, f"{path}.{i}")
        return
    raise HistoryError(path, f"expected a JSON value, got {type(value).__name__}")


def _rest(obj: dict[str, Any], known: frozenset[str], path: str, copy: bool) -> Mapping[str, Any]:
    if len(obj) == len(known) and all(k in obj for k in known):
        return EMPTY
    rest = {k: v for k, v in obj.items() if k not in known}
    if not rest:
        return EMPTY
    if copy:
        for k, v in rest.items():
            _check_json(v, f"{path}.{k}")
        rest = {k: copy_json(v) for k, v in rest.items()}
    return MappingProxyType(rest)


def _str(obj: dict[str, Any], key: str, path: str) -> str:
    value = obj.get(key, _MISSING)
    if isinstance(value, str):
        return value
    if value is _MISSING:
        raise HistoryError(f"{path}.{key}", "expected a string, got nothing (key missing)")
    _fail(f"{path}.{key}", "a string", value)


_MISSING: Any = object()
_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})
_TOOL_USE_KEYS = frozenset({"type", "id", "name", "input"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS = frozenset({"type", "data"})
_TYPE_KEY = frozenset({"type"})


def load_block(obj: Any, path: str, copy: bool = True) -> Block:
    """One content block (or one ``tool_result`` content item) from its JSON object."""
    if not isinstance(obj, dict):
        _fail(path, "a content block object", obj)
    kind = obj.get("type", _MISSING)
    if kind is _MISSING:
        raise HistoryError(f"{path}.type", "expected a block type string, got nothing (key missing)")
    if not isinstance(kind, str):
        _fail(f"{path}.type", "a block type string", kind)
    if kind == "text":
        return Text(_str(obj, "text", path), _rest(obj, _TEXT_KEYS, path, copy))
    if kind == "tool_result":
        return _load_tool_result(obj, path, copy)
    if kind == "tool_use":
        if "input" not in obj:
            raise HistoryError(f"{path}.input", "expected a JSON value, got nothing (key missing)")
        value = obj["input"]
        if copy:
            _check_json(value, f"{path}.input")
            value = copy_json(value)
        return ToolUse(_str(obj, "id", path), _str(obj, "name", path), value, _rest(obj, _TOOL_USE_KEYS, path, copy))
    if kind == "image":
        source = obj.get("source", _MISSING)
        if not isinstance(source, dict):
            if source is _MISSING:
                raise HistoryError(f"{path}.source", "expected an object, got nothing (key missing)")
            _fail(f"{path}.source", "an object", source)
        if copy:
            _check_json(source, f"{path}.source")
            source = copy_json(source)
        return Image(MappingProxyType(source), _rest(obj, _IMAGE_KEYS, path, copy))
    if kind == "thinking":
        signature = obj.get("signature")
        if signature is not None and not isinstance(signature, str):
            _fail(f"{path}.signature", "a string", signature)
        if "signature" in obj and signature is None:
            # A stored null signature is not the absent key: keep it among the unknown keys.
            return Thinking(_str(obj, "thinking", path), None, _rest(obj, _THINKING_KEYS - {"signature"}, path, copy))
        return Thinking(_str(obj, "thinking", path), signature, _rest(obj, _THINKING_KEYS, path, copy))
    if kind == "redacted_thinking":
        return RedactedThinking(_str(obj, "data", path), _rest(obj, _REDACTED_KEYS, path, copy))
    return Opaque(kind, _rest(obj, _TYPE_KEY, path, copy))


def _load_tool_result(obj: dict[str, Any], path: str, copy: bool) -> ToolResult:
    tool_use_id = _str(obj, "tool_use_id", path)
    raw = obj.get("content", _MISSING)
    content: str | tuple[Block, ...] | None
    if raw is _MISSING:
        content = None
    elif isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = tuple(load_block(item, f"{path}.content.{i}", copy) for i, item in enumerate(raw))
    else:
        _fail(f"{path}.content", "a string or an array of blocks", raw)
    is_error = obj.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        _fail(f"{path}.is_error", "a boolean", is_error)
    known = _TOOL_RESULT_KEYS
    if "is_error" in obj and is_error is None:
        known = known - {"is_error"}  # a stored null stays a stored null
    return ToolResult(tool_use_id, content, is_error, _rest(obj, known, path, copy))


def load_message(obj: Any, index: int, copy: bool = True) -> Message:
    path = f"messages.{index}"
    if not isinstance(obj, dict):
        _fail(path, "a message object", obj)
    role = obj.get("role", _MISSING)
    if role != "user" and role != "assistant":
        if role is _MISSING:
            raise HistoryError(f"{path}.role", 'expected "user" or "assistant", got nothing (key missing)')
        if isinstance(role, str):
            # json.dumps quotes and escapes: a role holding a newline must not break the one-line error.
            raise HistoryError(f"{path}.role", f'expected "user" or "assistant", got {json.dumps(role[:40])}')
        _fail(f"{path}.role", '"user" or "assistant"', role)
    raw = obj.get("content", _MISSING)
    content: str | tuple[Block, ...]
    if isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = tuple(load_block(b, f"{path}.content.{i}", copy) for i, b in enumerate(raw))
    elif raw is _MISSING:
        raise HistoryError(f"{path}.content", "expected a string or an array of blocks, got nothing (key missing)")
    else:
        _fail(f"{path}.content", "a string or an array of blocks", raw)
    meta = _rest(obj, _MESSAGE_KEYS, path, copy)
    for key, types in _META_TYPES.items():
        if key in meta and not isinstance(meta[key], types):
            expected = "a boolean" if types == (bool,) else "a string"
            _fail(f"{path}.{key}", expected, meta[key])
    if "ts" in meta:
        ts = meta["ts"]
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int | float)):
            _fail(f"{path}.ts", "a number", ts)
    return Message(role, content, meta)


def load(value: Any, copy: bool = True) -> History:
    """A history from its JSON value (a list of message objects). Never aliases ``value``."""
    if not isinstance(value, list):
        _fail("messages", "an array of messages", value)
    return tuple(load_message(m, i, copy) for i, m in enumerate(value))


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    """``1e999`` parses to infinity, which no JSON text can hold: refuse it here, not at dump time."""
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {literal[:40]} is out of range")
    return value


#: A ``\\uXXXX`` escape that may stand for a character above U+007F (see ``_parse_bytes``).
_WIDE_ESCAPE = re.compile(rb"\\u(?!00[0-7])")
_NARROW_FAILED: Any = object()


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        # Some of json's messages end in "at" already ("Invalid control character at"): say it once.
        msg = exc.msg[: -len(" at")] if exc.msg.endswith(" at") else exc.msg
        raise HistoryError("", f"not JSON: {msg} at line {exc.lineno} column {exc.colno}", source=source) from None
    except ValueError as exc:
        raise HistoryError("", f"not JSON: {exc}", source=source) from None
    except RecursionError:
        raise HistoryError("", "not JSON: nested too deeply", source=source) from None


def _utf8(text: str) -> str:
    return text if text.isascii() else text.encode("latin-1").decode("utf-8")


def _redecode(value: Any) -> Any:
    """Turn every string parsed from a latin-1 view of UTF-8 bytes back into what the bytes say."""
    if isinstance(value, str):
        return _utf8(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    if not item.isascii():
                        node[i] = _utf8(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
        elif isinstance(node, dict):
            rekey = False
            for key, item in node.items():
                rekey = rekey or not key.isascii()
                if isinstance(item, str):
                    if not item.isascii():
                        node[key] = _utf8(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
            if rekey:
                pairs = [(_utf8(k), v) for k, v in node.items()]
                node.clear()
                node.update(pairs)
    return value


def _parse_bytes(box: list[bytes], source: str) -> Any:
    """The JSON value of UTF-8 bytes, taken out of ``box`` so they can be freed while parsing.

    Memory, not speed, is why this is not ``json.loads(data)``: Python stores a string with 4 bytes
    per character as soon as it holds one character outside the BMP, and real histories do (Roo's
    environment details say ``💻 Code``), so the decoded document alone would take 4x the file.
    Unless an escape could produce a non-ASCII character, parsing a latin-1 view of the bytes (1 byte
    per character, a bijection) gives the same structure with each string's UTF-8 bytes spelled as
    latin-1 characters; ``_redecode`` then decodes just those strings, strictly. Anything unusual
    (escapes, bad UTF-8, bad JSON) takes the plain path, which also words the errors.
    """
    data = box.pop()
    ascii_only = data.isascii()
    if ascii_only or _WIDE_ESCAPE.search(data) is None:
        text = data.decode("latin-1")
        del data
        try:
            value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
            if not ascii_only:
                value = _redecode(value)
        except (ValueError, RecursionError):
            value = _NARROW_FAILED  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        if value is not _NARROW_FAILED:
            return value
        data = text.encode("latin-1")
        del text
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryError("", f"invalid UTF-8 at byte {exc.start}", source=source) from None
    del data
    return _json(text, source)


def _load_value(value: Any, source: str) -> History:
    try:
        return load(value, copy=False)
    except HistoryError as exc:
        raise exc.at(source) from None


def loads(text: str | bytes, source: str = "<input>") -> History:
    """A history from JSON text. Errors name ``source`` (a file name) and the place."""
    value = _parse_bytes([text], source) if isinstance(text, bytes) else _json(text, source)
    return _load_value(value, source)


def read(path: str | os.PathLike[str]) -> History:
    """A history from a file, or from standard input when ``path`` is ``-``."""
    import sys

    source = "<stdin>" if str(path) == "-" else str(path)
    try:
        box = [sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()]
    except OSError as exc:
        raise HistoryError("", f"cannot read: {exc.strerror or exc}", source=source) from None
    # The box hands the only reference to the bytes over, so they are freed once decoded.
    value = _parse_bytes(box, source)
    return _load_value(value, source)


def dump_block(block: Block, copy: bool = True) -> dict[str, Any]:
    cp = copy_json if copy else _identity
    out: dict[str, Any]
    if isinstance(block, Text):
        out = {"type": "text", "text": block.text}
        extra = block.extra
    elif isinstance(block, ToolResult):
        out = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        if isinstance(block.content, str):
            out["content"] = block.content
        elif block.content is not None:
            out["content"] = [dump_block(b, copy) for b in block.content]
        if block.is_error is not None:
            out["is_error"] = block.is_error
        extra = block.extra
    elif isinstance(block, ToolUse):
        out = {"type": "tool_use", "id": block.id, "name": block.name, "input": cp(block.input)}
        extra = block.extra
    elif isinstance(block, Image):
        out = {"type": "image", "source": cp(dict(block.source))}
        extra = block.extra
    elif isinstance(block, Thinking):
        out = {"type": "thinking", "thinking": block.thinking}
        if block.signature is not None:
            out["signature"] = block.signature
        extra = block.extra
    elif isinstance(block, RedactedThinking):
        out = {"type": "redacted_thinking", "data": block.data}
        extra = block.extra
    else:
        out = {"type": block.type}
        extra = block.fields
    for k, v in extra.items():
        out[k] = cp(v)
    return out


def _identity(value: Any) -> Any:
    return value


def dump_message(message: Message, copy: bool = True) -> dict[str, Any]:
    content: Any = message.content
    if not isinstance(content, str):
        content = [dump_block(b, copy) for b in content]
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.meta:
        cp = copy_json if copy else _identity
        for k, v in message.meta.items():
            out[k] = cp(v)
    return out


def dump(history: History, copy: bool = True) -> list[dict[str, Any]]:
    """The JSON value of a history: fresh containers the caller may do anything with."""
    return [dump_message(m, copy) for m in history]


def dumps(history: History, indent: int | None = None) -> str:
    """Strict JSON text (no NaN, no Infinity) of a history."""
    return json.dumps(dump(history, copy=False), ensure_ascii=False, indent=indent, allow_nan=False)


def write(history: History, stream: BinaryIO, indent: int | None = None) -> None:
    """``dumps(history, indent)`` as UTF-8 bytes on ``stream``, one message at a time.

    One message at a time because the whole document as one Python string can take 4x its size
    (see ``_parse_bytes``). A message holding a lone surrogate, which UTF-8 cannot carry, is
    written with ASCII escapes instead: the same JSON value.
    """
    if not history:
        stream.write(b"[]")
        return
    # json.dumps lays a list out as "[a, b]", or with an indent as "[\n" + shifted items + "\n]".
    prefix = "" if indent is None else " " * indent
    stream.write(b"[" if indent is None else b"[\n")
    for n, message in enumerate(history):
        value = dump_message(message, copy=False)
        if n:
            stream.write(b", " if indent is None else b",\n")
        for ascii_only in (False, True):
            text = json.dumps(value, ensure_ascii=ascii_only, indent=indent, allow_nan=False)
            if indent is not None:
                text = prefix + text.replace("\n", "\n" + prefix)  # JSON strings hold no raw newline
            try:
                stream.write(text.encode("utf-8"))
                break
            except UnicodeEncodeError:
                continue
    stream.write(b"]" if indent is None else b"\n]")
