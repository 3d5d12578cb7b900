"""The API oracle: would the Anthropic Messages API accept this request's structure? (contract §6)

The oracle judges a *request* (what is sent), never a stored history: ``ctxmodel validate FILE``
builds the request first (contract §6), and the property suites judge what a target would send
(contract §4 rule 4, §7). It reports every violation it finds, not only the first one the API
would name, each with the API's path (``messages.N`` / ``messages.N.content.M``) and the API's
own wording where domain §5.1 quotes it, so a person can match it against a 400 in their logs.

Decisions where the domain facts disagree or are silent (each documented in ``RULES``):

* Empty assistant content. The measured matrix (domain §5.1) accepts ``""``/``[]`` assistant
  content anywhere, while the API's own error text ("all messages must have non-empty content
  except for the optional final assistant message") rejects it outside the final position. The
  oracle takes the strict reading: a gate that accepts what one API version rejects lets a 400
  through, and normalization never creates empty messages (contract §3 rule 6), so only real
  defects are flagged.
* A last assistant message with ``tool_use`` and no results is accepted: its results are pending
  (the ``trailing=leave`` policy, contract §3), and the API's missing-result check names "the next
  message", which does not exist.
* An empty request is rejected, with the API's text (domain §5.1): a request needs at least one
  message, and a recovery, trimmer or repair that cuts everything must say so rather than send
  nothing. ``normalize([]) == []`` still holds: the empty request is the caller's.
* Same-role neighbours are accepted: the current API combines them (domain §5.2), and the contract
  neither merges nor requires alternation (domain §8 question 9).

The documented limits of domain §5.2 are checked too, strictly where they depend on the model: 5 MB
per base64 image (measured on the base64 text, as the API measures it), 8000 px per side, 2000 px
per side once a request has more than 20 images, 100 images per request (the 200k-context models'
limit; other models take 600), 32 MB per request (measured on the messages alone, as compact JSON:
the system prompt and tools only add to it). Image sizes are read from the image's header (PNG,
JPEG, GIF, WebP); an image whose header cannot be read is not judged on its dimensions. A
``reasoning`` block (an agent's internal block, domain §1.2) is reported when thinking is off: it
is not part of the Anthropic format, and agents strip it before sending unless thinking is on.

The wire (domain §5.6): the API parses the body as strict JSON, so a string anywhere in the request
(text, tool input, tool result, ids, unknown keys, keys themselves) holding half of a UTF-16
surrogate pair is a 400 before any rule above is read. Each one is reported with the API's text,
the JSON path of the string, its UTF-16 offset in that string (what JavaScript's ``slice`` counts)
and the line, column and char the API would name, counted in the body ``json.dumps({"messages":
[...]})`` (Python's defaults: ASCII only, ``", "`` and ``": "``), which is what the oracle can know
of the body a client builds (``lone_surrogates``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

import attrs

from ctxmodel.contract_data import (
    EMPTY_MESSAGES_TEXT,
    INVALID_JSON_PREFIX,
    LONE_HIGH_TEXT,
    LONE_LOW_TEXT,
    UNPAIRED_HIGH_TEXT,
)
from ctxmodel.model import Block, Image, Message, Opaque, RedactedThinking, Text, Thinking, ToolResult, ToolUse

__all__ = [
    "IMAGE_MAX_BASE64_BYTES",
    "IMAGE_MAX_PIXELS",
    "MANY_IMAGES",
    "MANY_IMAGE_MAX_PIXELS",
    "MAX_IMAGES",
    "REQUEST_MAX_BYTES",
    "RULES",
    "LoneSurrogate",
    "Rule",
    "Violation",
    "image_size",
    "images",
    "lone_surrogates",
    "request_bytes",
    "surrogate_violation",
    "validate",
]

#: Documented limits (domain §5.2, Anthropic *Images and vision*; the 5 MB error text of §5.1).
IMAGE_MAX_BASE64_BYTES = 5 * 1024 * 1024
IMAGE_MAX_PIXELS = 8000
MANY_IMAGES = 20
MANY_IMAGE_MAX_PIXELS = 2000
MAX_IMAGES = 100
REQUEST_MAX_BYTES = 32 * 1024 * 1024
#: ``tool_result`` content items the API takes (domain §5.1).
_RESULT_ITEM_TYPES = frozenset({"text", "image", "document"})


@attrs.frozen
class Rule:
    """One acceptance rule: what it forbids, and where the domain facts state it."""

    summary: str
    source: str


@attrs.frozen
class Violation:
    """One broken acceptance rule.

    ``message`` is the API's full text where domain §5.1 quotes it (paths filled in), else a clear
    sentence naming the same place. ``ids`` holds the tool ids involved, so that callers can compare
    violations "by rule and tool id, not by position" (contract §4 rule 4); it takes no part in
    equality, so a ``Violation(rule, path, message)`` built by hand compares equal.
    """

    rule: str
    path: str
    message: str
    ids: tuple[str, ...] = attrs.field(default=(), eq=False, kw_only=True)


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "first-message-not-user": Rule(
            "the first message must be a user message (older API, Bedrock)", "domain §5.1 first message, §5.2 Roles"
        ),
        "empty-user-message": Rule("a user message must have non-empty content", "domain §5.1 empty user message"),
        "empty-message": Rule(
            "an assistant message may be empty only in the final position (strict reading of a disputed rule)",
            "domain §5.1 empty message + empty-content matrix",
        ),
        "empty-text-block": Rule("a text block must be non-empty", "domain §5.1 empty text block"),
        "whitespace-text": Rule(
            "whitespace-only text must not be a message's only content", "domain §5.1 whitespace text + matrix"
        ),
        "missing-tool-result": Rule(
            "every tool_use of a non-final assistant message has a tool_result leading the next message",
            "domain §5.1 missing or non-leading result; §7 A1",
        ),
        "tool-result-not-first": Rule(
            "in a user message, tool_result blocks come before every other block",
            "domain §5.1 Handle tool calls; §7 A3",
        ),
        "unexpected-tool-use-id": Rule(
            "a tool_result's id names a tool_use of the message right before it",
            "domain §5.1 orphan or wrong id; §7 A2",
        ),
        "duplicate-tool-use-id": Rule("tool_use ids are unique across the request", "domain §5.1 duplicate id; §7 A4"),
        "duplicate-tool-result": Rule(
            "one tool_result per tool_use id in a message", "domain §5.1 duplicate result; §7 A4"
        ),
        "invalid-tool-id": Rule(
            "tool_use.id and tool_result.tool_use_id match ^[a-zA-Z0-9_-]+$", "domain §5.1 id charset; §7 A5"
        ),
        "tool-result-in-assistant": Rule(
            "tool_result blocks belong in user messages only", "domain §1.2 Block kinds; §7 A2"
        ),
        "tool-use-in-user": Rule("tool_use blocks belong in assistant messages only", "domain §1.2 Block kinds"),
        "thinking-required": Rule(
            "with thinking enabled, a final assistant message with tool_use starts with a thinking block",
            "domain §5.1 thinking with tools, §5.2; §7 A14",
        ),
        "thinking-disabled": Rule(
            "with thinking disabled, a final assistant message holds no thinking block",
            "domain §5.1 thinking disabled",
        ),
        "server-tool-pending": Rule(
            "after an unresolved server_tool_use, the next user message holds only tool_result blocks",
            "domain §5.1 server tool; §7 A16",
        ),
        "unexpected-server-tool-result": Rule(
            "a server tool result (e.g. advisor_tool_result) follows a server_tool_use with its id",
            "domain §5.1 server-tool variant",
        ),
        "tool-result-content-type": Rule(
            "a tool_result's content is a string or a list of text, image and document blocks",
            "domain §5.1 (tool_result.content)",
        ),
        "reasoning-without-thinking": Rule(
            "no `reasoning` block (an agent's internal block) in a request sent without thinking",
            "domain §1.2 Block kinds (reasoning)",
        ),
        "image-too-large": Rule("a base64 image is at most 5 MB (of base64 text)", "domain §5.1 image size, §5.2"),
        "image-too-many-pixels": Rule("an image is at most 8000 px on each side", "domain §5.2 Images"),
        "many-image-dimensions": Rule(
            "in a request with more than 20 images, each is at most 2000 px on each side",
            "domain §5.1 many-image dimensions, §5.2",
        ),
        "too-many-images": Rule(
            "at most 100 images per request (200k-context models; 600 for others)", "domain §5.2 Images"
        ),
        "request-too-large": Rule("a request is at most 32 MB", "domain §5.2 Images (32 MB per request)"),
        "empty-messages": Rule("a request has at least one message", "domain §5.1 empty request"),
        "lone-surrogate": Rule(
            "no string of the request holds half of a UTF-16 surrogate pair (the body must be valid JSON)",
            "domain §5.6 lone surrogates",
        ),
    }
)

_ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
_THINKING_TYPES = (Thinking, RedactedThinking)


def _missing_text(n: int, ids: Sequence[str]) -> str:
    return (
        f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: "
        f"{', '.join(ids)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def _unexpected_text(path: str, tool_id: str) -> str:
    return (
        f"{path}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_id}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )


def _thinking_required_text(path: str, found: str) -> str:
    return (
        f"{path}.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, "
        "a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and "
        "`tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`."
    )


def _is_server_result(block: Block) -> bool:
    """A server tool's result block (``web_search_tool_result``, ``advisor_tool_result``, ...)."""
    return isinstance(block, Opaque) and block.type.endswith("_tool_result") and block.type != "tool_result"


def _opaque_id(block: Opaque, key: str) -> str | None:
    value = block.fields.get(key)
    return value if isinstance(value, str) else None


def _thinking_enabled(history: Sequence[Message]) -> bool:
    """``thinking=None``: a request carrying thinking blocks was made with thinking enabled."""
    return any(m.role == "assistant" and any(isinstance(b, _THINKING_TYPES) for b in m.blocks) for m in history)


def _content_rules(n: int, message: Message, last: bool, out: list[Violation]) -> None:
    """Empty content, empty and whitespace-only text (domain §5.1 and its empty-content matrix)."""
    content = message.content
    if not content:  # "" or []
        if message.role == "user":
            out.append(
                Violation(
                    "empty-user-message", f"messages.{n}", f"messages.{n}: user messages must have non-empty content"
                )
            )
        elif not last:
            out.append(
                Violation(
                    "empty-message",
                    f"messages.{n}",
                    f"messages.{n}: all messages must have non-empty content except for the optional final assistant "
                    "message",
                )
            )
        return
    if isinstance(content, str):
        if not content.strip():
            out.append(
                Violation(
                    "whitespace-text", f"messages.{n}", "messages: text content blocks must contain non-whitespace text"
                )
            )
        return
    for m, block in enumerate(content):
        if isinstance(block, Text) and block.text == "":
            out.append(
                Violation(
                    "empty-text-block", f"messages.{n}.content.{m}", "messages: text content blocks must be non-empty"
                )
            )
    if all(isinstance(b, Text) for b in content) and not any(b.text.strip() for b in content if isinstance(b, Text)):
        for m, block in enumerate(content):
            if isinstance(block, Text) and block.text:
                out.append(
                    Violation(
                        "whitespace-text",
                        f"messages.{n}.content.{m}",
                        "messages: text content blocks must contain non-whitespace text",
                    )
                )


def _id_rule(path: str, field: str, tool_id: str, out: list[Violation]) -> None:
    if _ID_PATTERN.fullmatch(tool_id) is None:
        out.append(
            Violation(
                "invalid-tool-id",
                path,
                f"{path}.{field}: String should match pattern '^[a-zA-Z0-9_-]+$'",
                ids=(tool_id,),
            )
        )


def _user_rules(n: int, message: Message, prev: Message | None, out: list[Violation]) -> None:
    """Results lead, name a tool_use of the previous message, once each (domain §5.1, §7 A2-A4)."""
    if isinstance(message.content, str):
        return
    expected: set[str] = set()
    if prev is not None and prev.role == "assistant":
        expected = {u.id for u in prev.tool_uses}
    seen: set[str] = set()
    leading = True
    for m, block in enumerate(message.content):
        path = f"messages.{n}.content.{m}"
        if isinstance(block, ToolResult):
            tool_id = block.tool_use_id
            _id_rule(path, "tool_result.tool_use_id", tool_id, out)
            if not leading:
                out.append(
                    Violation(
                        "tool-result-not-first",
                        path,
                        f"{path}: `tool_result` blocks must come first in a user message's content; this one follows "
                        "a block of another type.",
                        ids=(tool_id,),
                    )
                )
            if tool_id not in expected:
                out.append(Violation("unexpected-tool-use-id", path, _unexpected_text(path, tool_id), ids=(tool_id,)))
            if tool_id in seen:
                out.append(
                    Violation(
                        "duplicate-tool-result",
                        path,
                        f"{path}: each tool_use must have a single result: `tool_use_id` {tool_id} already has a "
                        "`tool_result` block earlier in this message.",
                        ids=(tool_id,),
                    )
                )
            seen.add(tool_id)
        else:
            leading = False
            if isinstance(block, ToolUse):
                out.append(
                    Violation(
                        "tool-use-in-user",
                        path,
                        f"{path}: `tool_use` blocks are only allowed in `assistant` messages.",
                        ids=(block.id,),
                    )
                )


def _leading_result_ids(message: Message) -> set[str]:
    ids: set[str] = set()
    if isinstance(message.content, str):
        return ids
    for block in message.content:
        if not isinstance(block, ToolResult):
            break
        ids.add(block.tool_use_id)
    return ids


def _assistant_rules(n: int, message: Message, nxt: Message | None, used: dict[str, str], out: list[Violation]) -> None:
    """Unique ids, results in the next message, no results here (domain §5.1, §7 A1, A2, A4, A16)."""
    if isinstance(message.content, str):
        return
    order: list[str] = []
    server_uses: set[str] = set()
    server_resolved: set[str] = set()
    for m, block in enumerate(message.content):
        path = f"messages.{n}.content.{m}"
        if isinstance(block, ToolUse):
            _id_rule(path, "tool_use.id", block.id, out)
            if block.id in used:
                out.append(
                    Violation(
                        "duplicate-tool-use-id",
                        path,
                        f"{path}: `tool_use` ids must be unique",
                        ids=(block.id,),
                    )
                )
            else:
                used[block.id] = path
            if block.id not in order:
                order.append(block.id)
        elif isinstance(block, ToolResult):
            out.append(
                Violation(
                    "tool-result-in-assistant",
                    path,
                    f"{path}: `tool_result` blocks are only allowed in `user` messages.",
                    ids=(block.tool_use_id,),
                )
            )
        elif isinstance(block, Opaque) and block.type == "server_tool_use":
            server_id = _opaque_id(block, "id")
            if server_id is not None:
                server_uses.add(server_id)
        elif isinstance(block, Opaque) and _is_server_result(block):
            server_id = _opaque_id(block, "tool_use_id")
            if server_id is None:
                continue
            if server_id not in server_uses:
                out.append(
                    Violation(
                        "unexpected-server-tool-result",
                        path,
                        f"{path}: unexpected `tool_use_id` found in `{block.type}` blocks: {server_id}. Each "
                        f"`{block.type}` block must have a corresponding `server_tool_use` block before it.",
                        ids=(server_id,),
                    )
                )
            server_resolved.add(server_id)
    if nxt is None:
        return  # a final assistant message: its results are pending (module docstring)
    if order:
        answered = _leading_result_ids(nxt) if nxt.role == "user" else set()
        missing = [i for i in order if i not in answered]
        if missing:
            out.append(Violation("missing-tool-result", f"messages.{n}", _missing_text(n, missing), ids=tuple(missing)))
    pending = sorted(server_uses - server_resolved)
    if pending and nxt.role == "user":
        for m, block in enumerate(nxt.blocks):
            if not isinstance(block, ToolResult):
                path = f"messages.{n + 1}" if isinstance(nxt.content, str) else f"messages.{n + 1}.content.{m}"
                out.append(
                    Violation(
                        "server-tool-pending",
                        path,
                        f"{path}: the previous assistant message has an unresolved `server_tool_use` "
                        f"({', '.join(pending)}), so this message may hold only `tool_result` blocks.",
                        ids=tuple(pending),
                    )
                )


def _thinking_rules(history: Sequence[Message], thinking: bool, out: list[Violation]) -> None:
    """The final assistant message's thinking, enabled or disabled (domain §5.1, §5.2, §7 A14)."""
    last = next((n for n in range(len(history) - 1, -1, -1) if history[n].role == "assistant"), None)
    if last is None:
        return
    message = history[last]
    blocks = message.blocks
    if thinking:
        if message.tool_uses and not isinstance(blocks[0], _THINKING_TYPES):
            path = f"messages.{last}.content.0"
            out.append(
                Violation(
                    "thinking-required",
                    path,
                    _thinking_required_text(path, blocks[0].type),
                    ids=tuple(u.id for u in message.tool_uses),
                )
            )
    elif last == len(history) - 1:
        for m, block in enumerate(blocks):
            if isinstance(block, _THINKING_TYPES):
                path = f"messages.{last}.content.{m}"
                out.append(
                    Violation(
                        "thinking-disabled",
                        path,
                        f"{path}: When thinking is disabled, an `assistant` message in the final position cannot "
                        "contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
                    )
                )


def _sort_key(v: Violation) -> tuple[int, int]:
    parts = v.path.split(".")
    message = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
    block = int(parts[3]) if len(parts) > 3 and parts[3].isdigit() else -1
    return message, block


# ----------------------------------------------------------------------------------------------
# Images and sizes (domain §5.2)


def images(history: Sequence[Message]) -> Iterator[tuple[str, Image]]:
    """Every image of the request with the API's path to it, nested ones (in a tool_result) included."""
    for n, message in enumerate(history):
        if isinstance(message.content, str):
            continue
        for m, block in enumerate(message.content):
            if isinstance(block, Image):
                yield f"messages.{n}.content.{m}.image", block
            elif isinstance(block, ToolResult) and isinstance(block.content, tuple):
                for k, item in enumerate(block.content):
                    if isinstance(item, Image):
                        yield f"messages.{n}.content.{m}.tool_result.content.{k}.image", item


def _b64(data: str, chars: int) -> bytes:
    head = data[: chars - chars % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 9 < len(raw):
        if raw[pos] != 0xFF:
            return None
        marker = raw[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", raw[pos + 2 : pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


def image_size(data: str) -> tuple[int, int] | None:
    """``(width, height)`` read from a base64 image's header (PNG, JPEG, GIF, WebP), else ``None``."""
    head = _b64(data, 64)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        chunk = head[12:16]
        if chunk == b"VP8 ":
            width, height = struct.unpack("<HH", head[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8L":
            bits = int.from_bytes(head[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8X":
            return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
        return None
    if head[:2] == b"\xff\xd8":
        # The frame header can follow a large EXIF block: read further only for JPEG.
        for chars in (65536, len(data)):
            size = _jpeg_size(_b64(data, chars))
            if size is not None or chars >= len(data):
                return size
    return None


def _text_bytes_at_least(history: Sequence[Message]) -> int:
    """A quick lower bound of ``request_bytes``: the characters of the texts, results and images."""
    total = 0
    for message in history:
        content = message.content
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            if isinstance(block, Text):
                total += len(block.text)
            elif isinstance(block, Image):
                total += len(block.data or "")
            elif isinstance(block, ToolResult):
                if isinstance(block.content, str):
                    total += len(block.content)
                elif block.content is not None:
                    for item in block.content:
                        total += len(item.text) if isinstance(item, Text) else len(getattr(item, "data", None) or "")
    return total


def request_bytes(history: Sequence[Message]) -> int:
    """The size of ``{"messages": [...]}`` as compact JSON, in UTF-8 bytes (what the 32 MB limit counts)."""
    from ctxmodel.codec import dump_message

    total = len('{"messages":[]}') + max(len(history) - 1, 0)
    for message in history:
        text = json.dumps(dump_message(message, copy=False), ensure_ascii=False, separators=(",", ":"))
        total += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return total


def _content_limits(history: Sequence[Message], thinking: bool, out: list[Violation]) -> None:
    """Items a tool_result may hold, and ``reasoning`` blocks without thinking."""
    for n, message in enumerate(history):
        if isinstance(message.content, str):
            continue
        for m, block in enumerate(message.content):
            path = f"messages.{n}.content.{m}"
            if isinstance(block, ToolResult) and isinstance(block.content, tuple):
                for k, item in enumerate(block.content):
                    if item.type not in _RESULT_ITEM_TYPES:
                        out.append(
                            Violation(
                                "tool-result-content-type",
                                path,
                                f"{path}.content.{k}: a `tool_result` may hold text, image and document blocks, "
                                f"not `{item.type}`",
                                ids=(block.tool_use_id,),
                            )
                        )
            elif isinstance(block, Opaque) and block.type == "reasoning" and not thinking:
                out.append(
                    Violation(
                        "reasoning-without-thinking",
                        path,
                        f"{path}: a `reasoning` block (an agent's internal block, not an Anthropic one) in a request "
                        "sent without thinking; agents strip it before sending",
                    )
                )


def _size_limits(history: Sequence[Message], out: list[Violation]) -> None:
    """Domain §5.2: 5 MB per base64 image, its pixels, the image count, 32 MB per request."""
    found = list(images(history))
    many = len(found) > MANY_IMAGES
    for path, image in found:
        data = image.data
        if data is None or image.source.get("type") != "base64":
            continue
        where = f"{path}.source.base64"
        if len(data) > IMAGE_MAX_BASE64_BYTES:
            out.append(
                Violation(
                    "image-too-large",
                    where,
                    f"{where}: image exceeds 5 MB maximum: {len(data)} bytes > {IMAGE_MAX_BASE64_BYTES} bytes",
                )
            )
        size = image_size(data)
        if size is None:
            continue
        if max(size) > IMAGE_MAX_PIXELS:
            out.append(
                Violation(
                    "image-too-many-pixels",
                    where,
                    f"{where}.data: At least one of the image dimensions exceed max allowed size: "
                    f"{IMAGE_MAX_PIXELS} pixels ({size[0]}x{size[1]})",
                )
            )
        elif many and max(size) > MANY_IMAGE_MAX_PIXELS:
            out.append(
                Violation(
                    "many-image-dimensions",
                    where,
                    f"{where}.data: At least one of the image dimensions exceed max allowed size for many-image "
                    f"requests: {MANY_IMAGE_MAX_PIXELS} pixels ({size[0]}x{size[1]}; {len(found)} images in the "
                    "request)",
                )
            )
    if len(found) > MAX_IMAGES:
        path = found[MAX_IMAGES][0]
        out.append(
            Violation(
                "too-many-images",
                path,
                f"{path}: too many images in one request: {len(found)} > {MAX_IMAGES} (the limit of 200k-context "
                "models; others take 600); this is the first one over",
            )
        )
    # Serializing a 200 MB request to measure it costs as much as the rest of the checks: when its
    # texts alone are over, it is over, and that lower bound is what is reported.
    least = _text_bytes_at_least(history)
    total = least if least > REQUEST_MAX_BYTES else request_bytes(history)
    if total > REQUEST_MAX_BYTES:
        measured = f"at least {total}" if total == least else f"{total}"
        out.append(
            Violation(
                "request-too-large",
                "messages",
                f"messages: request_too_large: the request exceeds 32 MB: {measured} bytes of messages alone (compact "
                f"JSON) > {REQUEST_MAX_BYTES} bytes",
            )
        )


# ----------------------------------------------------------------------------------------------
# The wire (domain §5.6): strings the API's JSON parser rejects

_SURROGATE = re.compile("[\ud800-\udfff]")


@attrs.frozen
class LoneSurrogate:
    """Half of a UTF-16 surrogate pair in one string of a request body.

    ``path``: the string's JSON path (``messages.0.content.1.text``; for an object key, the key's
    path, ``key`` set). ``index``: its place in the Python string; ``unit``: the same place in UTF-16
    code units (what JavaScript's ``slice`` counts). ``char``: its place in the body as the API counts
    it (code points from the body's start to the escape's backslash). ``reason``: the parser's text.
    """

    path: str
    index: int
    unit: int
    char: int
    reason: str
    key: bool = False

    def api_text(self) -> str:
        return f"{INVALID_JSON_PREFIX}{self.reason}: line 1 column {self.char + 1} (char {self.char})"


def _shown_key(key: str) -> str:
    """A key as a path component: surrogates written as escapes, so a path is always printable."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)


def _halves(text: str) -> Iterator[tuple[int, int, str]]:
    """``(index, UTF-16 offset, reason)`` of every lone surrogate of ``text``, read as UTF-16.

    A high surrogate followed by a low one is a pair on the wire even when Python holds them as two
    code points (``json.dumps`` writes two escapes the API joins), so only the unpaired ones count.
    """
    astral = 0
    i, n = 0, len(text)
    while i < n:
        found = _SURROGATE.search(text, i)
        if found is None:
            return
        j = found.start()
        astral += sum(1 for c in text[i:j] if ord(c) > 0xFFFF)
        code = ord(text[j])
        if code <= 0xDBFF:
            nxt = text[j + 1] if j + 1 < n else None
            if nxt is not None and 0xDC00 <= ord(nxt) <= 0xDFFF:
                i = j + 2
                continue
            # json.dumps writes the next character as a \u escape (non-ASCII, a control) or not.
            escaped = nxt is not None and json.dumps(nxt)[1:3] == "\\u"
            yield j, j + astral, UNPAIRED_HIGH_TEXT if escaped else LONE_HIGH_TEXT
        else:
            yield j, j + astral, LONE_LOW_TEXT
        i = j + 1


def _has_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def _scan(value: object, path: str, pos: int, out: list[LoneSurrogate], key: bool = False) -> int:
    """Walk ``value`` as ``json.dumps`` writes it (its defaults) from body offset ``pos``; returns
    the offset after it."""
    if isinstance(value, str):
        if _SURROGATE.search(value) is not None:
            for index, unit, reason in _halves(value):
                char = pos + len(json.dumps(value[:index])) - 1
                out.append(LoneSurrogate(path, index, unit, char, reason, key))
        return pos + len(json.dumps(value))
    if isinstance(value, dict):
        pos += 1
        for n, (k, v) in enumerate(value.items()):
            if n:
                pos += 2
            inner = f"{path}.{_shown_key(str(k))}" if path else _shown_key(str(k))
            pos = _scan(str(k), inner, pos, out, key=True) + 2
            pos = _scan(v, inner, pos, out)
        return pos + 1
    if isinstance(value, list):
        pos += 1
        for n, item in enumerate(value):
            if n:
                pos += 2
            pos = _scan(item, f"{path}.{n}", pos, out)
        return pos + 1
    return pos + len(json.dumps(value))


def lone_surrogates(body: Mapping[str, object]) -> list[LoneSurrogate]:
    """Every lone surrogate of a request body (a JSON object: ``{"messages": [...]}``, ``system``,
    anything else), in body order, each placed as the API would place it (domain §5.6)."""
    if not _has_surrogate(body):
        return []
    out: list[LoneSurrogate] = []
    _scan(dict(body), "", 0, out)
    return out


def surrogate_violation(found: LoneSurrogate) -> Violation:
    """The violation a lone surrogate is: the API's text, then the string and the place in it."""
    half = "a key" if found.key else "this string"
    return Violation(
        "lone-surrogate",
        found.path,
        f"{found.api_text()} (at {found.path}, UTF-16 offset {found.unit} of {half}: half of a surrogate pair, "
        "as a cut by UTF-16 code units leaves it)",
    )


def _wire(history: Sequence[Message], out: list[Violation]) -> None:
    from ctxmodel.codec import dump_message

    dumped = [dump_message(m, copy=False) for m in history]
    out.extend(surrogate_violation(found) for found in lone_surrogates({"messages": dumped}))


def validate(history: Sequence[Message], *, thinking: bool | None = None) -> list[Violation]:
    """Every structural acceptance rule the request breaks, in path order (contract §6).

    ``thinking``: whether the request enables extended thinking; ``None`` infers it (enabled iff an
    assistant message carries a thinking block, since the API rejects those with thinking off).
    """
    out: list[Violation] = []
    if not history:
        return [Violation("empty-messages", "messages", EMPTY_MESSAGES_TEXT)]
    if history[0].role != "user":
        out.append(
            Violation("first-message-not-user", "messages.0", 'messages: first message must use the "user" role')
        )
    used: dict[str, str] = {}
    count = len(history)
    for n, message in enumerate(history):
        last = n == count - 1
        _content_rules(n, message, last, out)
        if message.role == "user":
            _user_rules(n, message, history[n - 1] if n else None, out)
        else:
            _assistant_rules(n, message, None if last else history[n + 1], used, out)
    enabled = _thinking_enabled(history) if thinking is None else thinking
    _thinking_rules(history, enabled, out)
    _content_limits(history, enabled, out)
    _size_limits(history, out)
    _wire(history, out)
    out.sort(key=_sort_key)
    return out
