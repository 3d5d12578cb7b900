"""A compact view of a history for people: one line per message.

Every error and failure report prints histories, and a shrunk counterexample is only useful if a
person sees its shape at a glance: which message holds which tool ids, in which order, what is
hidden, what is synthetic. So each block becomes a short token (``[use a:read_file]``,
``[result a!]``, ``[image]``, a quoted excerpt for text), long ids are cut to the shortest prefix
that still tells them apart, and metadata becomes a few flags.

Example (``•`` visible, ``·`` hidden, ``>>`` highlighted)::

    • #0 user       "Fix the failing test…"  ts=1718000000000
    · #1 assistant  [use a1:read_file]  truncated→t1
    • #2 user       [result a1] [image] >>[result b2!]
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence

from ctxmodel.model import Block, Image, Message, RedactedThinking, Text, Thinking, ToolResult, ToolUse
from ctxmodel.normalize import SYNTHETIC_TEXT

__all__ = ["IdLabels", "render"]

#: Prefixes agents put on tool ids (domain §1.2); dropped from labels because every id has one.
_ID_PREFIXES = ("toolu_vrtx_", "toolu_", "tooluse_", "call_00_", "call_", "srvtoolu_")
#: Ids and metadata ids up to this long are shown whole.
_SHORT_ID = 10
#: Shortest prefix shown of a long id (after its agent prefix), so labels stay recognizable.
_MIN_PREFIX = 4
#: Characters of text shown in an excerpt before the ellipsis.
_EXCERPT = 24
_ROLE_WIDTH = len("assistant")


def _strip_prefix(tool_id: str) -> str:
    for prefix in _ID_PREFIXES:
        if tool_id.startswith(prefix) and len(tool_id) > len(prefix):
            return tool_id[len(prefix) :]
    return tool_id


def _printable(value: str) -> str:
    """Escape what would break a one-line view (newlines, controls, lone surrogates)."""
    escaped = json.dumps(value, ensure_ascii=False)[1:-1]
    return escaped.encode("utf-8", "backslashreplace").decode("utf-8")


class IdLabels:
    """Short, still distinct labels for a set of ids (tool ids, condense and truncation ids).

    A long id is shown as the shortest prefix (of at least 4 characters, agent prefix removed) that
    no other id shares, then ``…``; ids the prefix removal would confuse are shown whole.
    """

    def __init__(self, ids: Iterable[str]) -> None:
        distinct = set(ids)
        long_ids = [i for i in distinct if len(i) > _SHORT_ID]
        stripped: dict[str, set[str]] = {}
        for tool_id in long_ids:
            stripped.setdefault(_strip_prefix(tool_id), set()).add(tool_id)
        rests = sorted(stripped)
        self._labels: dict[str, str] = {}
        for index, rest in enumerate(rests):
            owners = stripped[rest]
            if len(owners) > 1:
                for tool_id in owners:
                    self._labels[tool_id] = _printable(tool_id)
                continue
            # In sorted order, the neighbours share the longest prefixes with ``rest``.
            shared = 0
            for other in (rests[index - 1] if index else "", rests[index + 1] if index + 1 < len(rests) else ""):
                common = 0
                for a, b in zip(rest, other, strict=False):
                    if a != b:
                        break
                    common += 1
                shared = max(shared, common)
            size = max(_MIN_PREFIX, shared + 1)
            (tool_id,) = owners
            label = rest if size >= len(rest) else rest[:size] + "…"
            self._labels[tool_id] = _printable(label)
        # A whole rest can equal a short id ("toolu_ab12345678" next to "ab12345678"): show both whole.
        shown: dict[str, list[str]] = {}
        for tool_id in distinct:
            shown.setdefault(self(tool_id), []).append(tool_id)
        for group in shown.values():
            if len(group) > 1:
                for tool_id in group:
                    self._labels[tool_id] = _printable(tool_id)

    def __call__(self, tool_id: str) -> str:
        label = self._labels.get(tool_id)
        return label if label is not None else _printable(tool_id)


def _excerpt(value: str) -> str:
    if len(value) <= _EXCERPT:
        return f'"{_printable(value)}"'
    return f'"{_printable(value[:_EXCERPT].rstrip() or value[:_EXCERPT])}…"'


def _is_synthetic(block: ToolResult) -> bool:
    content = block.content
    if isinstance(content, str):
        return content == SYNTHETIC_TEXT
    return (
        content is not None and len(content) == 1 and isinstance(content[0], Text) and content[0].text == SYNTHETIC_TEXT
    )


def _block(block: Block, label: IdLabels) -> str:
    if isinstance(block, Text):
        return _excerpt(block.text)
    if isinstance(block, ToolUse):
        return f"[use {label(block.id)}:{_printable(block.name)}]"
    if isinstance(block, ToolResult):
        mark = "!" if block.is_error else ""
        synthetic = " (synthetic)" if _is_synthetic(block) else ""
        return f"[result {label(block.tool_use_id)}{mark}{synthetic}]"
    if isinstance(block, Image):
        return "[image]"
    if isinstance(block, Thinking):
        return "[thinking]"
    if isinstance(block, RedactedThinking):
        return "[redacted_thinking]"
    return f"[{_printable(block.type)}]"


def _flags(message: Message, label: IdLabels) -> list[str]:
    meta: Mapping[str, object] = message.meta
    flags: list[str] = []
    if message.is_summary:
        flags.append("summary" + (f" {label(message.condense_id)}" if message.condense_id else ""))
    elif message.condense_id:
        flags.append(f"condenseId={label(message.condense_id)}")
    if message.is_truncation_marker:
        flags.append("marker" + (f" {label(message.truncation_id)}" if message.truncation_id else ""))
    elif message.truncation_id:
        flags.append(f"truncationId={label(message.truncation_id)}")
    if message.condense_parent:
        flags.append(f"condensed→{label(message.condense_parent)}")
    if message.truncation_parent:
        flags.append(f"truncated→{label(message.truncation_parent)}")
    if "ts" in meta:
        flags.append(f"ts={_printable(json.dumps(meta['ts']))}")
    return flags


def _ids(history: Sequence[Message]) -> Iterable[str]:
    for message in history:
        for key in ("condenseId", "condenseParent", "truncationId", "truncationParent"):
            value = message.meta.get(key)
            if isinstance(value, str):
                yield value
        if isinstance(message.content, str):
            continue
        for block in message.content:
            if isinstance(block, ToolUse):
                yield block.id
            elif isinstance(block, ToolResult):
                yield block.tool_use_id


def _highlights(highlight: Collection[str]) -> tuple[set[int], set[tuple[int, int]]]:
    """Message and block positions named by paths; deeper paths mark their block."""
    messages: set[int] = set()
    blocks: set[tuple[int, int]] = set()
    for path in highlight:
        parts = path.split(".")
        if len(parts) < 2 or parts[0] != "messages" or not parts[1].isdigit():
            continue
        n = int(parts[1])
        if len(parts) >= 4 and parts[2] == "content" and parts[3].isdigit():
            blocks.add((n, int(parts[3])))
        else:
            messages.add(n)
    return messages, blocks


def _collapse(tokens: list[str]) -> list[str]:
    """Runs of identical tokens (forty images) read better as one token and a count."""
    out: list[str] = []
    run = 0
    for index, token in enumerate(tokens):
        run += 1
        if index + 1 < len(tokens) and tokens[index + 1] == token:
            continue
        out.append(token if run == 1 else f"{token}×{run}")  # noqa: RUF001 (a count reads as "times N")
        run = 0
    return out


def render(
    history: Sequence[Message], *, visible: Sequence[bool] | None = None, highlight: Collection[str] = ()
) -> str:
    """One line per message: visibility mark, index, role, block tokens, metadata flags.

    ``visible`` (e.g. ``visibility.visible_mask``) adds ``•`` for a visible and ``·`` for a hidden
    message; ``highlight`` holds paths (``messages.3``, ``messages.3.content.1``, or deeper, as the
    oracle reports them) marked with ``>>``.
    """
    label = IdLabels(_ids(history))
    marked_messages, marked_blocks = _highlights(highlight)
    width = len(str(max(len(history) - 1, 0)))
    lines: list[str] = []
    for n, message in enumerate(history):
        if isinstance(message.content, str):
            tokens = [_excerpt(message.content)]
            if (n, 0) in marked_blocks:
                tokens[0] = ">>" + tokens[0]
        elif not message.content:
            tokens = ["[]"]
        else:
            tokens = _collapse(
                [
                    (">>" if (n, m) in marked_blocks else "") + _block(block, label)
                    for m, block in enumerate(message.content)
                ]
            )
        head = f"#{n:<{width}} {message.role:<{_ROLE_WIDTH}}"
        if visible is not None:
            shown = visible[n] if n < len(visible) else True
            head = ("• " if shown else "· ") + head
        if highlight:
            hit = n in marked_messages or any(pos[0] == n for pos in marked_blocks)
            head = (">> " if hit else "   ") + head
        line = head + "  " + " ".join(tokens)
        flags = _flags(message, label)
        if flags:
            line += "  " + " ".join(flags)
        lines.append(line)
    return "\n".join(lines)
