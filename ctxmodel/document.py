"""A history file as it was opened: what kind of file it is, and how to write it back in its own style.

Users bring whatever file they have at hand after a 400, so opening one recognises it
and says so in one line (``Document.notes``) rather than failing on its shape:

* a stored history (``api_conversation_history.json``, a JSON array of messages), read as it is;
  a Cline one is recognised by its ``[tool] Result:`` text results and explained;
* an API request body (``{"messages": [...], ...}``) and a ctxmodel fixture (``params.messages``):
  their messages are read;
* JSON Lines of messages (one per line) are read; a JSON Lines session log of events, and Roo's
  ``ui_messages.json``, are refused with a line naming the file to open instead;
* a UTF-8 byte-order mark is read past, UTF-16 text is decoded;
* the messages' dialect (``ctxmodel.dialects``: Anthropic Messages, OpenAI Chat Completions) is
  detected, or forced by name; an Anthropic history is ``Document.history``, any other is
  ``Document.native``, loaded by its dialect.

Writing back (``Document.dump``) keeps the file's own formatting: everything around the messages
array byte for byte, each message the repair left alone byte for byte (its key order and number
text with it), and new or changed messages in the file's layout (compact ``JSON.stringify`` style,
``", "`` separators, or an indent), a changed message keeping its key order and the bytes of the
blocks and values it still shares with the stored one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.codec import _parse_bytes, dump_block, dump_message, load
from ctxmodel.errors import HistoryError
from ctxmodel.model import Block, History, Message, Text
from ctxmodel.tokens.jsjson import js_string

__all__ = ["Document", "Layout", "open_document", "parse_document"]

_WS = re.compile(rb"[ \t\n\r]*")
_WIDE_UNICODE_ESCAPE = re.compile(rb"\\u(?!00[0-7])")
_CLINE_RESULT = re.compile(r"\[[^\]\n]{1,80}\] Result:")
_KEY_SEP = re.compile(rb'\{\s*"(?:[^"\\]|\\.)*"(\s*:\s*)')
_DECODER = json.JSONDecoder()


@attrs.frozen
class Layout:
    """How the file lays its JSON out, read off its messages array (new text is written the same way)."""

    #: The indentation unit (``"  "``, ``"\t"``), or ``None`` for a one-line layout.
    indent: str | None = None
    #: Between the items of a one-line array or object: ``","`` (``JSON.stringify``) or ``", "``.
    item_sep: str = ","
    #: Between a key and its value: ``":"`` or ``": "``.
    key_sep: str = ":"
    #: Non-ASCII characters written as ``\\uXXXX`` escapes (Python's default) rather than raw.
    ascii: bool = False


@attrs.frozen
class Document:
    """One opened file: its history, what it was recognised as, and what it takes to write it back."""

    history: History
    source: str
    #: ``history`` (a JSON array of messages), ``request`` (``{"messages": ...}``), ``fixture``
    #: (``params.messages``) or ``jsonl`` (one message per line).
    kind: str
    #: One line each: what was recognised, for the person who opened the file.
    notes: tuple[str, ...] = ()
    #: The file's bytes as read (``None`` when not kept).
    raw: bytes | None = attrs.field(default=None, repr=False)
    #: The JSON text as UTF-8 (byte-order mark removed, UTF-16 transcoded); ``raw`` when the same.
    text: bytes | None = attrs.field(default=None, repr=False)
    #: ``utf-8``, ``utf-8-sig`` (with a byte-order mark), ``utf-16-le`` or ``utf-16-be``.
    encoding: str = "utf-8"
    #: Where the messages array is: the keys leading to it (``()`` for the whole document).
    where: tuple[str, ...] = ()
    #: The dialect the messages were read as (``ctxmodel.dialects``), and whether it was detected
    #: (rather than forced with ``--dialect``).
    dialect: str = "anthropic"
    detected: bool = True
    #: The messages as that dialect loaded them, for a dialect other than ``anthropic`` (whose
    #: messages are ``history``, then empty).
    native: Any = attrs.field(default=None, repr=False)

    def dump(self, history: Sequence[Message], origins: Sequence[int | None]) -> bytes:
        """The file with its messages replaced by ``history``, in the file's own style.

        ``origins[k]`` is the index in ``self.history`` that ``history[k]`` came from (``None``
        for a new message): an unchanged message (the same object) is copied byte for byte.
        """
        if self.text is None:
            raise ValueError("the document was opened without its text")
        return _encode(_dump(self, history, origins), self.encoding)

    def dump_json(self, messages: Sequence[Any], origins: Sequence[int | None], stored: Sequence[Any]) -> bytes:
        """The file with its messages replaced by JSON ``messages`` (a dialect's dumped history).

        ``origins[k]`` is the index in ``stored`` (the loaded messages) that ``messages[k]`` came
        from, or ``None``; a message that is still ``stored[origins[k]]`` (the same object) is
        copied byte for byte, any other written in the file's layout (its own key order).
        """
        if self.text is None:
            raise ValueError("the document was opened without its text")
        return _encode(_dump_json(self, messages, origins, stored), self.encoding)


# ----------------------------------------------------------------------------------------------
# Opening


def _decode(raw: bytes, source: str) -> tuple[bytes, str, list[str]]:
    """The JSON text as UTF-8, the encoding it was in, and a note when that was not plain UTF-8."""
    if raw.startswith(b"\xef\xbb\xbf"):
        note = f"{source}: starts with a UTF-8 byte-order mark: read past it (agents write none)"
        return raw[3:], "utf-8-sig", [note]
    encoding = None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16-le" if raw.startswith(b"\xff\xfe") else "utf-16-be"
        body = raw[2:]
    elif len(raw) >= 2 and raw[0] == 0 and raw[1] != 0:
        encoding, body = "utf-16-be", raw
    elif len(raw) >= 2 and raw[1] == 0 and raw[0] != 0:
        encoding, body = "utf-16-le", raw
    if encoding is None:
        return raw, "utf-8", []
    try:
        text = body.decode(encoding).encode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise HistoryError("", f"not UTF-8, and not valid {encoding.upper()} either (byte {exc.start})",
                           source=source) from None
    label = encoding[-2:].upper()
    return text, encoding, [f"{source}: UTF-16 ({label}) text: decoded (agents write UTF-8)"]


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" in value and "content" in value


def _jsonl(text: bytes, source: str) -> list[Any] | None:
    """The lines of a JSON Lines file, each parsed, or ``None`` when it is not one."""
    lines = [line for line in text.split(b"\n") if line.strip()]
    if len(lines) < 2:
        return None
    values: list[Any] = []
    for n, line in enumerate(lines):
        try:
            values.append(_parse_bytes([line], source))
        except HistoryError:
            if n == 0:
                return None
            raise HistoryError("", f"JSON Lines, but line {n + 1} is not JSON", source=source) from None
    if not all(isinstance(v, dict) for v in values):
        return None
    return values


def _locate(value: Any, source: str) -> tuple[Any, str, tuple[str, ...], list[str]]:
    """The messages value, the kind of file, where the messages are, and what to tell the user."""
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "role" not in v and v.get("type") in ("say", "ask") for v in value):
            raise HistoryError(
                "",
                f"this is a ui_messages.json ({len(value)} say/ask entries: the chat as the extension shows it), "
                "not what the API is sent: open api_conversation_history.json in the same task folder",
                source=source,
            )
        return value, "history", (), []
    if isinstance(value, dict):
        schema = value.get("schema")
        params = value.get("params")
        if isinstance(schema, str) and schema.startswith("ctxmodel-fixture/") and isinstance(params, dict):
            if isinstance(params.get("messages"), list):
                what = ", ".join(
                    f"{key} {value[key]}" for key in ("property", "op") if isinstance(value.get(key), str)
                )
                n = len(params["messages"])
                note = f"{source}: a ctxmodel fixture ({what}): reading its params.messages ({n} messages)"
                return params["messages"], "fixture", ("params", "messages"), [note]
        if isinstance(value.get("messages"), list):
            others = [k for k in value if k != "messages"]
            also = f"; also {', '.join(others[:6])}{'…' if len(others) > 6 else ''}" if others else ""
            note = f'{source}: an API request body: reading its "messages" ({len(value["messages"])} messages{also})'
            return value["messages"], "request", ("messages",), [note]
        if isinstance(value.get("input"), list):
            others = [k for k in value if k != "input"]
            also = f"; also {', '.join(others[:6])}{'…' if len(others) > 6 else ''}" if others else ""
            note = f'{source}: an API request body: reading its "input" ({len(value["input"])} items{also})'
            return value["input"], "request", ("input",), [note]
        if isinstance(value.get("contents"), list):
            others = [k for k in value if k != "contents"]
            also = f"; also {', '.join(others[:6])}{'…' if len(others) > 6 else ''}" if others else ""
            note = f'{source}: an API request body: reading its "contents" ({len(value["contents"])} contents{also})'
            return value["contents"], "request", ("contents",), [note]
    return value, "history", (), []


def _cline_note(history: History, value: Any, source: str) -> str | None:
    """Cline's history: ``[tool] Result:`` text where the Anthropic format has ``tool_result`` blocks."""
    cline_keys = any(isinstance(m, dict) and ("modelInfo" in m or "metrics" in m) for m in value)
    results = 0
    for message in history:
        if message.role != "user" or isinstance(message.content, str):
            continue
        results += sum(1 for b in message.content if isinstance(b, Text) and _CLINE_RESULT.match(b.text))
    if not results or not (cline_keys or not any(m.tool_results for m in history)):
        return None
    return (
        f"{source}: a Cline history: Cline keeps each tool's output as a text block \"[tool] Result: …\" "
        f"({results} here), not as a tool_result block, so by the Anthropic rules every tool_use below reads as "
        "missing its result: that is Cline's format, not damage to the file"
    )


def _lines_value(text: bytes, source: str, notes: list[str], exc: HistoryError) -> list[Any]:
    """The messages of a JSON Lines file, or the error that names what the file is instead."""
    rows = _jsonl(text, source) if b"\n" in text.strip() else None
    if rows is None:
        raise exc.at(source) from None
    if all(_is_message(r) for r in rows):
        notes.append(f"{source}: JSON Lines, one message per line: read as a history of {len(rows)} messages")
        return rows
    kinds = sorted({str(r.get("type")) for r in rows if isinstance(r.get("type"), str)})[:4]
    shown = f" ({', '.join(kinds)})" if kinds else ""
    raise HistoryError(
        "",
        f"a JSON Lines session log ({len(rows)} events{shown}, like Claude Code's ~/.claude/projects logs), "
        "not a stored history: ctxmodel reads an agent's api_conversation_history.json (a JSON array of "
        "messages)",
        source=source,
    ) from None


def _document(
    box: list[bytes], source: str, keep: bool, reread: Callable[[], bytes] | None, dialect: str = "auto"
) -> Document:
    """The document of the bytes in ``box`` (taken out of it). Without ``keep`` and with ``reread``
    (a file, not stdin) the bytes are freed while parsing, and read again only if they are not JSON."""
    raw = box.pop()
    text, encoding, notes = _decode(raw, source)
    kind_override = None
    if keep or reread is None:
        try:
            value = _parse_bytes([text], source)
        except HistoryError as exc:
            value, kind_override = _lines_value(text, source, notes, exc), "jsonl"
    else:
        del raw
        inner = [text]
        del text
        try:
            value = _parse_bytes(inner, source)
        except HistoryError as exc:
            text = _decode(reread(), source)[0]
            value, kind_override = _lines_value(text, source, notes, exc), "jsonl"
            del text
        raw = text = b""
    messages, kind, where, more = _locate(value, source)
    notes.extend(more)
    from ctxmodel.dialects import choose

    chosen, detected = choose(messages, dialect)
    native: Any = None
    history: History = ()
    try:
        if chosen.name == "anthropic":
            history = load(messages, copy=False)
        else:
            native = chosen.load(messages)
    except HistoryError as exc:
        prefix = ".".join(where[:-1])
        path = f"{prefix}.{exc.path}" if prefix and exc.path else exc.path
        raise HistoryError(path, exc.message, source) from None
    if isinstance(messages, list) and chosen.name == "anthropic":
        note = _cline_note(history, messages, source)
        if note is not None:
            notes.append(note)
    return Document(
        history,
        source,
        kind_override or kind,
        tuple(notes),
        raw if keep else None,
        text if keep else None,
        encoding,
        where,
        chosen.name,
        detected,
        native,
    )


def parse_document(raw: bytes, source: str = "<input>", keep: bool = True, dialect: str = "auto") -> Document:
    """A document from the bytes of a file (see the module docstring); ``keep``: keep the text;
    ``dialect``: a name of ``ctxmodel.dialects``, or ``auto`` to detect it from the messages."""
    return _document([raw], source, keep, None, dialect)


def open_document(path: str, keep: bool = True, dialect: str = "auto") -> Document:
    """A document from a file, or from standard input when ``path`` is ``-``.

    ``keep=False`` (reading only, as ``count`` and ``recover`` do): the file's bytes are freed as
    soon as they are parsed, so a 200 MB history is not held twice.
    """
    import sys

    source = "<stdin>" if path == "-" else path
    try:
        box = [sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()]
    except OSError as exc:
        raise HistoryError("", f"cannot read: {exc.strerror or exc}", source=source) from None

    def reread() -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise HistoryError("", f"cannot read: {exc.strerror or exc}", source=source) from None

    return _document(box, source, keep, None if path == "-" else reread, dialect)


# ----------------------------------------------------------------------------------------------
# Where things are in the text: spans found by the C decoder, value by value


def _ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _array_spans(text: str, pos: int) -> tuple[int, list[tuple[int, int]]]:
    """``text[pos]`` is ``[``: the end of the array and the span of each element."""
    spans: list[tuple[int, int]] = []
    pos = _ws(text, pos + 1)
    if text[pos] == "]":
        return pos + 1, spans
    while True:
        _, end = _DECODER.raw_decode(text, pos)
        spans.append((pos, end))
        pos = _ws(text, end)
        if text[pos] == "]":
            return pos + 1, spans
        pos = _ws(text, pos + 1)  # the comma


def _object_spans(text: str, pos: int) -> tuple[int, list[tuple[str, int, int]]]:
    """``text[pos]`` is ``{``: the end of the object and ``(key, value start, value end)`` per member."""
    members: list[tuple[str, int, int]] = []
    pos = _ws(text, pos + 1)
    if text[pos] == "}":
        return pos + 1, members
    while True:
        key, end = _DECODER.raw_decode(text, pos)
        pos = _ws(text, _ws(text, end) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, pos)
        members.append((_utf8_key(key), pos, end))
        pos = _ws(text, end)
        if text[pos] == "}":
            return pos + 1, members
        pos = _ws(text, pos + 1)


def _utf8_key(key: str) -> str:
    return key if key.isascii() else key.encode("latin-1").decode("utf-8", "surrogateescape")


@attrs.frozen
class _Spans:
    start: int  # of the messages array's "["
    end: int  # after its "]"
    items: list[tuple[int, int]]


def _spans(doc: Document) -> _Spans:
    assert doc.text is not None
    text = doc.text.decode("latin-1")  # one character per byte: offsets are byte offsets
    if doc.kind == "jsonl":
        items: list[tuple[int, int]] = []
        pos = 0
        for line in doc.text.split(b"\n"):
            if line.strip():
                lead = len(line) - len(line.lstrip())
                items.append((pos + lead, pos + len(line.rstrip())))
            pos += len(line) + 1
        return _Spans(0, len(doc.text), items)
    pos = _ws(text, 0)
    for key in doc.where:
        _, members = _object_spans(text, pos)
        pos = next(start for name, start, _ in members if name == key)
    end, items = _array_spans(text, pos)
    return _Spans(pos, end, items)


def _depth(doc: Document) -> int:
    """How deep the messages sit: 1 in a history, 2 in a request body, 3 in a fixture."""
    return len(doc.where) + 1


def _layout(doc: Document, spans: _Spans) -> Layout:
    assert doc.text is not None
    text = doc.text
    ascii_only = text.isascii() and _WIDE_UNICODE_ESCAPE.search(text) is not None
    if not spans.items:
        return Layout(ascii=ascii_only)
    first_start, first_end = spans.items[0]
    match = _KEY_SEP.match(text, first_start)
    key_sep = match.group(1).decode("ascii") if match else ":"
    lead = text[spans.start + 1 : first_start]
    if doc.kind != "jsonl" and b"\n" in lead:
        prefix = lead.rsplit(b"\n", 1)[1].decode("ascii")
        depth = _depth(doc)
        unit = prefix[: len(prefix) // depth] if prefix and len(prefix) % depth == 0 else (prefix or "  ")
        return Layout(indent=unit, item_sep=",", key_sep=": " if "\n" in key_sep else key_sep, ascii=ascii_only)
    if len(spans.items) > 1 and doc.kind != "jsonl":
        between = text[first_end : spans.items[1][0]]
        item_sep = between.decode("ascii") if between.strip() == b"," else ","
    else:
        inner = re.search(rb',( ?)"', text[first_start:first_end])
        item_sep = "," + (inner.group(1).decode("ascii") if inner else "")
    return Layout(item_sep=item_sep, key_sep=key_sep, ascii=ascii_only)


# ----------------------------------------------------------------------------------------------
# Writing


def _string(value: str, layout: Layout) -> str:
    return json.dumps(value) if layout.ascii else js_string(value)


def _styled(value: Any, layout: Layout, depth: int) -> str:
    """A new JSON value in the file's layout, ``depth`` being the nesting level it sits at."""
    if isinstance(value, str):
        return _string(value, layout)
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        # Python's own number text: JavaScript reads the same double from it, Python the same int or float.
        return json.dumps(value)
    if isinstance(value, dict):
        items = [f"{_string(k, layout)}{layout.key_sep}{_styled(v, layout, depth + 1)}" for k, v in value.items()]
        return _container("{", "}", items, layout, depth)
    if isinstance(value, list | tuple):
        return _container("[", "]", [_styled(v, layout, depth + 1) for v in value], layout, depth)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _container(open_: str, close: str, items: Sequence[str], layout: Layout, depth: int) -> str:
    if not items:
        return open_ + close
    if layout.indent is None:
        return open_ + layout.item_sep.join(items) + close
    inner = "\n" + layout.indent * (depth + 1)
    return open_ + inner + ("," + inner).join(items) + "\n" + layout.indent * depth + close


def _raw(text: str, start: int, end: int) -> str:
    """A piece of the file's text (latin-1 view) back as the str it spells."""
    return text[start:end].encode("latin-1").decode("utf-8", "surrogateescape")


def _changed_message(
    message: Message, original: Message | None, span: tuple[int, int] | None, text: str, layout: Layout, depth: int
) -> str:
    """A message that is not the stored one, keeping the stored one's key order and shared bytes."""
    value = dump_message(message, copy=False)
    if original is None or span is None:
        return _styled(value, layout, depth)
    _, members = _object_spans(text, span[0])
    stored = {key: (start, end) for key, start, end in members}
    order = [key for key, _, _ in members if key in value] + [key for key in value if key not in stored]
    same_blocks: dict[int, tuple[int, int]] = {}
    if (
        "content" in stored
        and not isinstance(original.content, str)
        and not isinstance(message.content, str)
        and text[stored["content"][0]] == "["
    ):
        _, block_spans = _array_spans(text, stored["content"][0])
        if len(block_spans) == len(original.content):
            same_blocks = {id(b): s for b, s in zip(original.content, block_spans, strict=True)}
    items: list[str] = []
    for key in order:
        if key in stored and _unchanged(key, message, original):
            piece = _raw(text, *stored[key])
        elif key == "content" and not isinstance(message.content, str) and same_blocks:
            blocks = [
                _raw(text, *same_blocks[id(b)]) if id(b) in same_blocks else _styled(_dumped(b), layout, depth + 2)
                for b in message.content
            ]
            piece = _container("[", "]", blocks, layout, depth + 1)
        else:
            piece = _styled(value[key], layout, depth + 1)
        items.append(f"{_string(key, layout)}{layout.key_sep}{piece}")
    return _container("{", "}", items, layout, depth)


def _dumped(block: Block) -> dict[str, Any]:
    return dump_block(block, copy=False)


def _unchanged(key: str, message: Message, original: Message) -> bool:
    if key == "role":
        return message.role == original.role
    if key == "content":
        if isinstance(message.content, str) or isinstance(original.content, str):
            return message.content == original.content and type(message.content) is type(original.content)
        return len(message.content) == len(original.content) and all(
            a is b for a, b in zip(message.content, original.content, strict=True)
        )
    return key in original.meta and key in message.meta and message.meta[key] is original.meta[key]


def _dump(doc: Document, history: Sequence[Message], origins: Sequence[int | None]) -> bytes:
    """The UTF-8 text of the file with ``history`` as its messages.

    Bytes throughout: a message left alone is a slice of the file, so a 200 MB history is never
    one Python string (see ``ctxmodel.codec._parse_bytes`` for why that matters).
    """
    assert doc.text is not None
    data = doc.text
    spans = _spans(doc)
    layout = _layout(doc, spans)
    text = data.decode("latin-1")  # shares no memory with ``data``, but only changed messages are read
    depth = _depth(doc)
    pieces: list[bytes] = []
    for message, origin in zip(history, origins, strict=True):
        original = doc.history[origin] if origin is not None and 0 <= origin < len(doc.history) else None
        span = spans.items[origin] if original is not None and origin is not None else None
        if original is not None and message is original and span is not None:
            pieces.append(data[span[0] : span[1]])
            continue
        if doc.kind == "jsonl":
            flat = attrs.evolve(layout, indent=None)
            piece = _changed_message(message, original, span, text, flat, 0)
        else:
            piece = _changed_message(message, original, span, text, layout, depth)
        pieces.append(piece.encode("utf-8", "surrogatepass"))
    return _splice(doc, spans, layout, pieces)


def _dump_json(doc: Document, messages: Sequence[Any], origins: Sequence[int | None], stored: Sequence[Any]) -> bytes:
    """As :func:`_dump`, for messages given as JSON values (a dialect other than Anthropic's)."""
    assert doc.text is not None
    data = doc.text
    spans = _spans(doc)
    layout = _layout(doc, spans)
    pieces: list[bytes] = []
    for value, origin in zip(messages, origins, strict=True):
        if origin is not None and 0 <= origin < len(stored) and value is stored[origin] and origin < len(spans.items):
            start, end = spans.items[origin]
            pieces.append(data[start:end])
            continue
        if doc.kind == "jsonl":
            piece = _styled(value, attrs.evolve(layout, indent=None), 0)
        else:
            piece = _styled(value, layout, _depth(doc))
        pieces.append(piece.encode("utf-8", "surrogatepass"))
    return _splice(doc, spans, layout, pieces)


def _splice(doc: Document, spans: _Spans, layout: Layout, pieces: list[bytes]) -> bytes:
    """The file's text with ``pieces`` (UTF-8 message texts) as its messages array's items."""
    assert doc.text is not None
    data = doc.text
    depth = _depth(doc)
    if doc.kind == "jsonl":
        head = data[: spans.items[0][0]] if spans.items else b""
        tail = data[spans.items[-1][1] :] if spans.items else b"\n"
        return head + b"\n".join(pieces) + tail
    head, tail = data[: spans.start], data[spans.end :]
    if not pieces:
        return head + b"[]" + tail
    if layout.indent is None:
        sep = layout.item_sep.encode("ascii")
        return head + b"[" + sep.join(pieces) + b"]" + tail
    # Keep the file's own whitespace after "[" and before "]"; items on lines of their own.
    lead = data[spans.start + 1 : spans.items[0][0]] if spans.items else b"\n" + layout.indent.encode() * depth
    trail = data[spans.items[-1][1] : spans.end - 1] if spans.items else b"\n" + layout.indent.encode() * (depth - 1)
    sep = b",\n" + layout.indent.encode("ascii") * depth
    return head + b"[" + lead + sep.join(pieces) + trail + b"]" + tail


def _encode(data: bytes, encoding: str) -> bytes:
    if encoding == "utf-8":
        return data
    if encoding == "utf-8-sig":
        return b"\xef\xbb\xbf" + data
    bom = b"\xff\xfe" if encoding == "utf-16-le" else b"\xfe\xff"
    return bom + data.decode("utf-8", "surrogatepass").encode(encoding, "surrogatepass")
