"""Repair a stored history so that the request built from it passes the oracle.

``normalize`` writes a *request*; a user with a 400 needs a *stored history* the agent can load
again. ``repair`` keeps what the agent needs to keep and changes only what the API rejects:

* Hidden messages (contract §2) come back unchanged and still hidden, tags and all; no visible
  message that decides what is hidden (the last summary, a marker some ``truncationParent`` names)
  is removed, and no message is un-hidden.
* Only the messages the oracle's findings involve change. A message the request needs unchanged is
  returned as the input's own object, so a writer can copy its bytes; a history whose request
  already passes is returned as the input itself, with an empty report.
* Pairing is repaired between *visible* messages (contract §3, "judged on what is sent"). A valid
  result (its ``tool_use`` in the visible message right before it) is never given another id nor
  put in another message; it keeps its content and ``is_error``. When results must lead, the valid
  ones move to the front in their own order. Orphan results are turned into text by default
  (``"Tool result:\\n" + content``, what Roo-Code does at append time, domain §2.3), so nothing the
  model saw is thrown away; ``orphans="drop"`` drops them. Missing results get the reference's
  synthetic result (``is_error: true``, "interrupted"), in the user message that follows or in a
  user message inserted right after the ``tool_use`` message. A truncation marker or a summary never
  receives results: the inserted message goes before it.
* Other defects the oracle names are repaired the smallest way that removes them: empty text blocks
  removed; empty or whitespace-only messages removed (a deciding summary or marker gets its text
  back instead); ids outside ``^[a-zA-Z0-9_-]+$`` mapped to ``_`` (collisions get ``_2``...), the
  same on the ``tool_use`` and its results; a ``tool_result`` in an assistant message, or a
  ``tool_use`` in a user message, treated as an orphan; a later duplicate ``tool_use`` removed with
  its results (contract §3 rule 5); a legacy assistant-role first summary or marker made user-role
  (as Roo-Code did in PR #10873 and #9844), and any other leading assistant message given a user
  message before it; thinking blocks moved first in the last ``tool_use`` turn, or, when that turn
  has none and thinking cannot be proven on, removed from the request so that it is valid with
  thinking off (a thinking block cannot be invented: it is signed); ``reasoning`` blocks removed
  when thinking is off; a ``tool_result`` item of a type the API does not take turned into text.
* The API's size limits (domain §5.2): an image over 5 MB of base64 or 8000 px, the oldest images
  beyond 100, the largest over 2000 px while a request has more than 20, and then the largest
  images while the request is over 32 MB, are each replaced by a text saying what was there.
* Half of a surrogate pair (domain §5.6) that a cut by UTF-16 code units left at the end of a text
  (or right before the reference's truncation notice), or at its start, is dropped: the rest of
  the pair is gone, and nothing else can stand for it. A lone surrogate anywhere else (inside a
  text, a tool input, an id, an unknown key) cannot be repaired without knowing what it was and is
  left, and reported unresolved; so is an empty request (repair cannot invent a message).
* Messages the repair creates carry ``role``, ``content`` and, when the message before has one, a
  ``ts`` one above it (Zoo merges saves by ``ts``, domain §1.3).

What cannot be repaired without information the file lacks (a request over the API's size, say)
is left as it is and listed in ``RepairReport.unresolved``. Pure and deterministic: the input is
never mutated, and nothing depends on a clock or a random source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from ctxmodel.codec import dump_block
from ctxmodel.contract_data import marker_text
from ctxmodel.model import (
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
from ctxmodel.normalize import orphan_text, rule5, synthetic_result
from ctxmodel.oracle import (
    IMAGE_MAX_BASE64_BYTES,
    IMAGE_MAX_PIXELS,
    MANY_IMAGE_MAX_PIXELS,
    MANY_IMAGES,
    MAX_IMAGES,
    REQUEST_MAX_BYTES,
    Violation,
    image_size,
    request_bytes,
    validate,
)
from ctxmodel.visibility import visible_mask

__all__ = ["ORPHANS", "Change", "RepairReport", "repair", "request_of"]

#: What repair does with an orphan result: keep it as text (the default) or drop it.
ORPHANS = ("to_text", "drop")
#: Text of a deciding summary that was stored empty or blank (its id must stay: it hides messages).
EMPTY_SUMMARY_TEXT = "[Conversation summary: the stored summary was empty]"
#: Text of the user message put before a request that started with an assistant message.
LEADING_USER_TEXT = "[The conversation's first user message is missing from the stored history]"

_ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
_BAD_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_THINKING = (Thinking, RedactedThinking)


@attrs.frozen
class Change:
    """One change, named by the place in the **input** file a person can look up.

    ``index`` is the input index of the message changed or removed; for a message the repair
    created, ``created`` is set and ``index`` is the input index of the message it follows (-1 at
    the front). ``rule`` is the oracle rule (``ctxmodel.oracle.RULES``) the change answers.
    """

    index: int
    rule: str
    action: str
    tool_id: str | None = None
    created: bool = False
    #: The array the paths are in: ``messages``, ``input`` for Responses items, ``contents`` for Gemini.
    root: str = "messages"

    def line(self) -> str:
        noun = {"input": "item", "contents": "content"}.get(self.root, "message")
        where = (
            (f"new {noun} at the front" if self.index < 0 else f"new {noun} after {self.root}.{self.index}")
            if self.created
            else f"{self.root}.{self.index}"
        )
        tool = f" {self.tool_id}" if self.tool_id is not None else ""
        return f"{where}: {self.rule}{tool}: {self.action}"


@attrs.frozen
class RepairReport:
    """What ``repair`` changed, and what the request built from its result still breaks."""

    changes: tuple[Change, ...] = ()
    #: For each message of the result, its input index, or ``None`` for a message repair created.
    origins: tuple[int | None, ...] = ()
    #: Violations of the result's request that repair cannot remove (paths in that request).
    unresolved: tuple[Violation, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def lines(self) -> list[str]:
        return [c.line() for c in self.changes]


@attrs.define
class _Entry:
    origin: int | None
    #: For a created message: the input index of the message it follows (-1 at the front).
    after: int
    message: Message
    hidden: bool
    #: Never removed: it decides what is hidden.
    decider: bool = False


@attrs.define
class _Work:
    """The history under repair (mutable while one call runs, never shared)."""

    entries: list[_Entry]
    source: History
    orphans: str
    changes: list[Change] = attrs.Factory(list)

    def untouched(self, k: int) -> bool:
        entry = self.entries[k]
        return entry.origin is not None and entry.message is self.source[entry.origin]

    def visible(self) -> list[int]:
        return [k for k, e in enumerate(self.entries) if not e.hidden]

    def where(self, k: int) -> tuple[int, bool]:
        entry = self.entries[k]
        return (entry.origin, False) if entry.origin is not None else (entry.after, True)

    def note(self, k: int, rule: str, action: str, tool_id: str | None = None) -> None:
        index, created = self.where(k)
        self.changes.append(Change(index, rule, action, tool_id, created))

    def replace(self, k: int, message: Message) -> None:
        self.entries[k].message = message

    def remove(self, k: int, rule: str, action: str) -> None:
        self.note(k, rule, action)
        del self.entries[k]

    def insert_after(self, k: int, message: Message, ts: object = None) -> int:
        """Insert ``message`` right after entry ``k`` (-1: at the front); returns its position.

        It gets ``ts`` one above the message before it when that one has an integer ``ts``
        (``ts`` given: that one, when an integer).
        """
        anchor = self.entries[k] if k >= 0 else None
        after = -1 if anchor is None else (anchor.origin if anchor.origin is not None else anchor.after)
        if ts is None and anchor is not None and isinstance(anchor.message.ts, int):
            ts = anchor.message.ts + 1
        if isinstance(ts, int) and not isinstance(ts, bool):
            message = message.with_meta(ts=ts)
        self.entries.insert(k + 1, _Entry(None, after, message, False))
        return k + 1


def _deciders(history: Sequence[Message], mask: Sequence[bool]) -> set[int]:
    named = {m.truncation_parent for m in history if m.truncation_parent is not None}
    out: set[int] = set()
    for i in range(len(history) - 1, -1, -1):
        if history[i].is_summary:
            out.add(i)
            break
    for i, message in enumerate(history):
        if mask[i] and message.is_truncation_marker and message.truncation_id in named:
            out.add(i)
    return out


def request_of(history: Sequence[Message]) -> History:
    """The messages the API is sent for a stored history: its visible messages (contract §2)."""
    return tuple(m for m, keep in zip(history, visible_mask(history), strict=True) if keep)


def _blocks(message: Message) -> list[Block]:
    return list(message.content) if not isinstance(message.content, str) else []


def _is_blank(message: Message) -> bool:
    """Content the API rejects as a message's only content: empty, or whitespace-only text."""
    content = message.content
    if isinstance(content, str):
        return not content.strip()
    if not content:
        return True
    return all(isinstance(b, Text) for b in content) and not any(b.text.strip() for b in content if isinstance(b, Text))


def _orphan_block(work: _Work, k: int, result: ToolResult, rule: str, where: str) -> Block | None:
    """An orphan result by the policy: a text block holding it, or nothing."""
    if work.orphans == "to_text" or work.entries[k].decider:
        work.note(k, rule, f"{where} turned to text", result.tool_use_id)
        return orphan_text(result)
    work.note(k, rule, f"{where} dropped", result.tool_use_id)
    return None


# ----------------------------------------------------------------------------------------------
# Passes, in order. Each looks at the visible messages only and leaves what is fine as it was.


def _misplaced_blocks(work: _Work) -> None:
    """Empty text blocks, results in assistant messages, tool calls in user messages."""
    for k in work.visible():
        message = work.entries[k].message
        if isinstance(message.content, str):
            continue
        kept: list[Block] = []
        changed = False
        for block in message.content:
            if isinstance(block, Text) and block.text == "":
                work.note(k, "empty-text-block", "empty text block removed")
                changed = True
                continue
            if message.role == "assistant" and isinstance(block, ToolResult):
                made = _orphan_block(work, k, block, "tool-result-in-assistant", "result in an assistant message")
                changed = True
                if made is not None:
                    kept.append(made)
                continue
            if message.role == "user" and isinstance(block, ToolUse):
                work.note(k, "tool-use-in-user", "tool_use in a user message removed", block.id)
                changed = True
                continue
            kept.append(block)
        if changed:
            work.replace(k, message.with_content(tuple(kept)))


_RULE5_NOTES = {
    "later-use": "later tool_use with a used id removed",
    "repeated-use": "repeated tool_use in the message removed",
    "result-of-removed": "result of a removed duplicate tool_use removed",
}


def _duplicate_uses(work: _Work) -> None:
    """Contract §3 rule 5 (``normalize.rule5``) on the visible messages, each removal noted."""
    visible = work.visible()
    messages = [work.entries[k].message for k in visible]
    for k, message, (kept, removed) in zip(visible, messages, rule5(messages), strict=True):
        for what, tool_id in removed:
            work.note(k, "duplicate-tool-use-id", _RULE5_NOTES[what], tool_id)
        if kept is not None:
            work.replace(k, message.with_content(kept))


def _last_assistant(work: _Work) -> int | None:
    for k in reversed(work.visible()):
        if work.entries[k].message.role == "assistant":
            return k
    return None


def _thinking_on(work: _Work) -> bool:
    messages = [work.entries[k].message for k in work.visible()]
    return any(m.role == "assistant" and any(isinstance(b, _THINKING) for b in m.blocks) for m in messages)


def _thinking(work: _Work, thinking: bool | None) -> None:
    """The last ``tool_use`` turn must open with its thinking when thinking is on (domain §5.1, §5.2).

    Its thinking blocks, if it has some further in, move first. If it has none, a thinking block
    cannot be made (they are signed), so when thinking is only inferred the request is made valid
    with thinking off: every visible thinking block is removed. With thinking off, the message in
    the final position may hold none.
    """
    last = _last_assistant(work)
    if last is None:
        return
    message = work.entries[last].message
    enabled = _thinking_on(work) if thinking is None else thinking
    if enabled and message.tool_uses and not isinstance(message.blocks[0], _THINKING):
        blocks = _blocks(message)
        thoughts: list[Block] = [b for b in blocks if isinstance(b, _THINKING)]
        if thoughts:
            work.note(last, "thinking-required", "thinking block moved first")
            rest: list[Block] = [b for b in blocks if not isinstance(b, _THINKING)]
            work.replace(last, message.with_content(tuple(thoughts + rest)))
            return
        if thinking is True:
            return  # thinking declared on, and no block to put first: unresolved
        for k in work.visible():
            entry = work.entries[k]
            if entry.message.role != "assistant" or isinstance(entry.message.content, str):
                continue
            kept = [b for b in entry.message.content if not isinstance(b, _THINKING)]
            if len(kept) != len(entry.message.content):
                work.note(k, "thinking-required", "thinking block removed (the last tool_use turn has none: send "
                          "without extended thinking)")
                work.replace(k, entry.message.with_content(tuple(kept)))
        return
    if not enabled and last == work.visible()[-1] and not isinstance(message.content, str):
        kept = [b for b in message.content if not isinstance(b, _THINKING)]
        if len(kept) != len(message.content):
            work.note(last, "thinking-disabled", "thinking block removed from the final assistant message")
            work.replace(last, message.with_content(tuple(kept)))


def _blank_messages(work: _Work, roles: tuple[str, ...]) -> None:
    """Empty and whitespace-only messages the API rejects (a final empty assistant message it takes)."""
    visible = work.visible()
    last = visible[-1] if visible else None
    for k in reversed(visible):
        entry = work.entries[k]
        message = entry.message
        if message.role not in roles or not _is_blank(message):
            continue
        empty = not message.content
        if empty and message.role == "assistant" and k == last and work.untouched(k):
            continue  # the API takes an empty final assistant message: it was stored so, leave it
        rule = ("empty-user-message" if message.role == "user" else "empty-message") if empty else "whitespace-text"
        if entry.decider:
            work.note(k, rule, "empty deciding message given its text back")
            work.replace(k, _decider_text(work, message))
            continue
        work.remove(k, rule, "empty message removed" if empty else "whitespace-only message removed")


def _decider_text(work: _Work, message: Message) -> Message:
    if message.is_summary:
        return message.with_content((Text(EMPTY_SUMMARY_TEXT),))
    tid = message.truncation_id
    hidden = sum(1 for e in work.entries if e.message.truncation_parent == tid)
    return message.with_content(marker_text(hidden))


def _sanitized(tool_id: str, taken: set[str]) -> str:
    base = _BAD_ID_CHAR.sub("_", tool_id) or "tool"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


def _all_ids(work: _Work) -> set[str]:
    out: set[str] = set()
    for entry in work.entries:
        for block in entry.message.blocks:
            if isinstance(block, ToolUse):
                out.add(block.id)
            elif isinstance(block, ToolResult):
                out.add(block.tool_use_id)
    return out


def _bad_ids(work: _Work) -> None:
    """Ids outside the API's pattern, renamed the same on a ``tool_use`` and its results next to it."""
    visible = work.visible()
    taken: set[str] | None = None
    for n, k in enumerate(visible):
        message = work.entries[k].message
        if message.role != "assistant" or not any(_ID_PATTERN.fullmatch(u.id) is None for u in message.tool_uses):
            continue
        if taken is None:
            taken = _all_ids(work)
        names: dict[str, str] = {}
        blocks: list[Block] = []
        for block in _blocks(message):
            if isinstance(block, ToolUse) and _ID_PATTERN.fullmatch(block.id) is None:
                new = names.setdefault(block.id, _sanitized(block.id, taken))
                work.note(k, "invalid-tool-id", f"tool_use id renamed {new}", block.id)
                block = attrs.evolve(block, id=new)
            blocks.append(block)
        work.replace(k, message.with_content(tuple(blocks)))
        if n + 1 < len(visible) and work.entries[visible[n + 1]].message.role == "user":
            nxt = visible[n + 1]
            after = work.entries[nxt].message
            if isinstance(after.content, str):
                continue
            renamed: list[Block] = []
            for block in after.content:
                if isinstance(block, ToolResult) and block.tool_use_id in names:
                    work.note(nxt, "invalid-tool-id", f"tool_use_id renamed {names[block.tool_use_id]}",
                              block.tool_use_id)
                    block = attrs.evolve(block, tool_use_id=names[block.tool_use_id])
                renamed.append(block)
            work.replace(nxt, after.with_content(tuple(renamed)))


def _synthetic_message(uses: Sequence[str]) -> Message:
    return Message("user", tuple(synthetic_result(u) for u in uses))


def _pair_user(work: _Work, k: int, uses: Sequence[str]) -> bool:
    """Results of ``uses`` lead message ``k``, once each; orphans by the policy. False: remove it."""
    message = work.entries[k].message
    content = message.content
    if isinstance(content, str):
        if not uses:
            return True
        for u in uses:
            work.note(k, "missing-tool-result", "synthetic result added", u)
        tail: tuple[Block, ...] = (Text(content),) if content else ()
        work.replace(k, message.with_content(tuple(synthetic_result(u) for u in uses) + tail))
        return True
    wanted = set(uses)
    found: set[str] = set()
    results: list[Block] = []
    others: list[Block] = []
    moved = False
    changed = False
    behind = False  # a block other than a result came before, in the input's order
    for block in content:
        if isinstance(block, ToolResult):
            rid = block.tool_use_id
            if rid in wanted and rid not in found:
                found.add(rid)
                if behind:
                    moved = True
                    work.note(k, "tool-result-not-first", "result moved to the front", rid)
                results.append(block)
                continue
            changed = True
            if rid in wanted:
                work.note(k, "duplicate-tool-result", "second result for the id dropped", rid)
                continue
            made = _orphan_block(work, k, block, "unexpected-tool-use-id", "orphan result")
            if made is not None:
                others.append(made)
            continue
        behind = True
        others.append(block)
    missing = [u for u in uses if u not in found]
    for u in missing:
        work.note(k, "missing-tool-result", "synthetic result added", u)
    if not (moved or changed or missing):
        return True
    blocks = results + [synthetic_result(u) for u in missing] + others
    if not blocks and not work.entries[k].decider:
        work.note(k, "unexpected-tool-use-id", "message emptied by the repair removed")
        return False
    work.replace(k, message.with_content(tuple(blocks)))
    return True


def _pairing(work: _Work) -> None:
    """Contract §3 rules 1-4 between visible messages, changing only the messages that break them."""
    k = 0
    prev: int | None = None  # position of the previous visible entry
    while k < len(work.entries):
        entry = work.entries[k]
        if entry.hidden:
            k += 1
            continue
        message = entry.message
        before = work.entries[prev].message if prev is not None else None
        uses = [u.id for u in before.tool_uses] if before is not None and before.role == "assistant" else []
        if message.role == "assistant":
            if uses:
                assert prev is not None
                at = work.insert_after(prev, _synthetic_message(uses))
                for u in uses:
                    work.note(at, "missing-tool-result", "synthetic result in a new user message", u)
                k += 1
            prev = k
            k += 1
            continue
        if uses and (message.is_truncation_marker or message.is_summary):
            if not any(isinstance(b, ToolResult) and b.tool_use_id in set(uses) for b in message.blocks):
                assert prev is not None
                at = work.insert_after(prev, _synthetic_message(uses))
                for u in uses:
                    work.note(at, "missing-tool-result", "synthetic result in a new user message (before the "
                              "marker or summary, which holds none)", u)
                k += 1
                uses = []
        if _pair_user(work, k, uses):
            prev = k
            k += 1
        else:
            del work.entries[k]


def _server_tools(work: _Work) -> None:
    """After an unresolved ``server_tool_use``, the next user message holds only results (domain §5.1)."""
    visible = work.visible()
    for n in range(len(visible) - 2, -1, -1):
        k, nxt = visible[n], visible[n + 1]
        message = work.entries[k].message
        after = work.entries[nxt].message
        if message.role != "assistant" or after.role != "user":
            continue
        blocks = _blocks(message)
        uses = {b.fields.get("id") for b in blocks if isinstance(b, Opaque) and b.type == "server_tool_use"}
        resolved = {
            b.fields.get("tool_use_id")
            for b in blocks
            if isinstance(b, Opaque) and b.type.endswith("_tool_result") and b.type != "tool_result"
        }
        if not (uses - resolved - {None}):
            continue
        results = [b for b in after.blocks if isinstance(b, ToolResult)]
        others = [b for b in after.blocks if not isinstance(b, ToolResult)]
        if not others:
            continue
        work.note(nxt, "server-tool-pending", "blocks other than results moved to a new user message after it")
        if results:
            work.replace(nxt, after.with_content(tuple(results)))
            work.insert_after(nxt, Message("user", tuple(others)))
        else:
            # Nothing but other blocks: the pending server call gets the user's turn as it is.
            continue


def _orphan_server_results(work: _Work) -> None:
    """A server tool result without its ``server_tool_use`` before it in the message is removed."""
    for k in work.visible():
        message = work.entries[k].message
        if message.role != "assistant" or isinstance(message.content, str):
            continue
        uses: set[object] = set()
        kept: list[Block] = []
        for block in message.content:
            if isinstance(block, Opaque) and block.type == "server_tool_use":
                uses.add(block.fields.get("id"))
            elif (
                isinstance(block, Opaque)
                and block.type.endswith("_tool_result")
                and block.type != "tool_result"
                and isinstance(block.fields.get("tool_use_id"), str)
                and block.fields.get("tool_use_id") not in uses
            ):
                work.note(k, "unexpected-server-tool-result", f"{block.type} without its server_tool_use removed",
                          str(block.fields.get("tool_use_id")))
                continue
            kept.append(block)
        if len(kept) != len(message.content):
            work.replace(k, message.with_content(tuple(kept)))


def _first_message(work: _Work) -> None:
    """The request starts with a user message (older API, Bedrock: domain §5.1, §5.2)."""
    visible = work.visible()
    if not visible:
        return
    k = visible[0]
    message = work.entries[k].message
    if message.role == "user":
        return
    plain = not any(isinstance(b, ToolUse | Thinking | RedactedThinking) for b in message.blocks)
    if (message.is_summary or message.is_truncation_marker) and plain:
        work.note(k, "first-message-not-user", "legacy assistant-role summary or marker made user-role")
        work.replace(k, attrs.evolve(message, role="user"))
        return
    # Just before the first visible message (after whatever hidden messages precede it), its ts - 1.
    ts = message.ts - 1 if isinstance(message.ts, int) else None
    at = work.insert_after(k - 1, Message("user", (Text(LEADING_USER_TEXT),)), ts=ts if ts is not None else False)
    work.note(at, "first-message-not-user", "user message put before the leading assistant message")


def _content_limits(work: _Work, thinking: bool | None) -> None:
    """``reasoning`` blocks without thinking; ``tool_result`` items of a type the API does not take."""
    enabled = _thinking_on(work) if thinking is None else thinking
    for k in work.visible():
        message = work.entries[k].message
        if isinstance(message.content, str):
            continue
        kept: list[Block] = []
        changed = False
        for block in message.content:
            if isinstance(block, Opaque) and block.type == "reasoning" and not enabled:
                work.note(k, "reasoning-without-thinking", "reasoning block removed (sent without thinking)")
                changed = True
                continue
            if isinstance(block, ToolResult) and isinstance(block.content, tuple):
                items = [
                    item if item.type in ("text", "image", "document") else _item_text(item) for item in block.content
                ]
                if any(a is not b for a, b in zip(items, block.content, strict=True)):
                    work.note(k, "tool-result-content-type", "result item of another type turned to text",
                              block.tool_use_id)
                    block = attrs.evolve(block, content=tuple(items))
                    changed = True
            kept.append(block)
        if changed:
            work.replace(k, message.with_content(tuple(kept)))


def _item_text(item: Block) -> Text:
    import json

    return Text(json.dumps(dump_block(item, copy=False), separators=(",", ":"), ensure_ascii=False))


@attrs.frozen
class _ImageAt:
    entry: int  # position in work.entries
    block: int
    item: int | None  # position in the tool_result's content, for a nested image
    image: Image
    size: tuple[int, int] | None


def _request_images(work: _Work) -> list[_ImageAt]:
    out: list[_ImageAt] = []
    for k in work.visible():
        message = work.entries[k].message
        for m, block in enumerate(_blocks(message)):
            if isinstance(block, Image):
                out.append(_ImageAt(k, m, None, block, _base64_size(block)))
            elif isinstance(block, ToolResult) and isinstance(block.content, tuple):
                for i, item in enumerate(block.content):
                    if isinstance(item, Image):
                        out.append(_ImageAt(k, m, i, item, _base64_size(item)))
    return out


def _base64_size(image: Image) -> tuple[int, int] | None:
    data = image.data
    return image_size(data) if data is not None and image.source.get("type") == "base64" else None


def _size_limits(work: _Work, oversized: bool) -> None:
    """Images the API refuses, or too many, or a request over 32 MB: each image becomes a text.

    ``oversized``: the request was over 32 MB when last judged (measuring it means serializing it).
    """
    found = _request_images(work)
    if not found:
        return
    out: dict[int, tuple[str, str]] = {}  # index in ``found`` -> (rule, reason)
    for n, at in enumerate(found):
        data = at.image.data
        if data is not None and at.image.source.get("type") == "base64" and len(data) > IMAGE_MAX_BASE64_BYTES:
            out[n] = ("image-too-large", f"{len(data)} bytes of base64, over the API's 5 MB per image")
        elif at.size is not None and max(at.size) > IMAGE_MAX_PIXELS:
            out[n] = ("image-too-many-pixels", f"{at.size[0]}x{at.size[1]} px, over the API's 8000 px")
    left = [n for n in range(len(found)) if n not in out]
    for n in left[: max(len(left) - MAX_IMAGES, 0)]:  # the oldest go first
        out[n] = ("too-many-images", f"one of more than {MAX_IMAGES} images in the request (the oldest go)")
    left = [n for n in range(len(found)) if n not in out]
    large = sorted(
        (n for n in left if max(found[n].size or (0, 0)) > MANY_IMAGE_MAX_PIXELS),
        key=lambda n: -max(found[n].size or (0, 0)),
    )
    while len(left) > MANY_IMAGES and large:
        n = large.pop(0)
        size = found[n].size or (0, 0)
        out[n] = ("many-image-dimensions", f"{size[0]}x{size[1]} px, over 2000 px in a request of more than "
                  f"{MANY_IMAGES} images")
        left.remove(n)
    total = request_bytes([work.entries[k].message for k in work.visible()]) if oversized else 0
    saved = sum(len(found[n].image.data or "") for n in out)
    if total - sum(len(at.image.data or "") for at in found) > REQUEST_MAX_BYTES:
        left = []  # not even without any image would it fit: leave the images, say it is unresolved
    for n in sorted(left, key=lambda n: -len(found[n].image.data or "")):
        if total - saved <= REQUEST_MAX_BYTES:
            break
        out[n] = ("request-too-large", "one of the largest images of a request over the API's 32 MB")
        saved += len(found[n].image.data or "")
    for n in sorted(out):
        at = found[n]
        rule, reason = out[n]
        message = work.entries[at.entry].message
        blocks = _blocks(message)
        placeholder = Text(f"[Image removed: {reason}]")
        if at.item is None:
            blocks[at.block] = placeholder
        else:
            result = blocks[at.block]
            assert isinstance(result, ToolResult) and isinstance(result.content, tuple)
            items = list(result.content)
            items[at.item] = placeholder
            blocks[at.block] = attrs.evolve(result, content=tuple(items))
        holder = blocks[at.block]
        tool_id = holder.tool_use_id if isinstance(holder, ToolResult) else None
        work.note(at.entry, rule, "image replaced by a text saying so", tool_id)
        work.replace(at.entry, message.with_content(tuple(blocks)))


#: A lone high surrogate a cut left: at the end, or right before the truncation notice.
_CUT_HIGH = re.compile("[\ud800-\udbff](?![\udc00-\udfff])(?=$|\n\\[Tool result truncated: )")
#: A lone low surrogate a cut left: at the start.
_CUT_LOW = re.compile("^[\udc00-\udfff]")


def _uncut(text: str) -> str:
    return _CUT_LOW.sub("", _CUT_HIGH.sub("", text))


def _uncut_blocks(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, Text):
            block = attrs.evolve(block, text=_uncut(block.text))
        elif isinstance(block, ToolResult) and block.content is not None:
            inner = _uncut(block.content) if isinstance(block.content, str) else _uncut_blocks(block.content)
            block = attrs.evolve(block, content=inner)
        out.append(block)
    return tuple(out)


def _cut_halves(work: _Work, found: Sequence[Violation]) -> None:
    """Drop the half of a surrogate pair a cut left in a text (module docstring); only when the
    oracle found one, so that a clean history costs nothing."""
    if not any(v.rule == "lone-surrogate" for v in found):
        return
    for k in work.visible():
        message = work.entries[k].message
        content = message.content
        fixed = _uncut(content) if isinstance(content, str) else _uncut_blocks(content)
        if fixed != content:
            work.note(k, "lone-surrogate", "half of a surrogate pair left by a cut dropped")
            work.replace(k, message.with_content(fixed))


def _round(work: _Work, thinking: bool | None, found: Sequence[Violation]) -> None:
    _cut_halves(work, found)
    _misplaced_blocks(work)
    _orphan_server_results(work)
    _duplicate_uses(work)
    _thinking(work, thinking)
    _content_limits(work, thinking)
    _size_limits(work, any(v.rule == "request-too-large" for v in found))
    _blank_messages(work, ("assistant",))
    _bad_ids(work)
    _pairing(work)
    _server_tools(work)
    _blank_messages(work, ("user", "assistant"))
    _first_message(work)


def _result(work: _Work) -> tuple[History, tuple[int | None, ...]]:
    return tuple(e.message for e in work.entries), tuple(e.origin for e in work.entries)


def repair(
    history: Iterable[Message], *, orphans: str = "to_text", thinking: bool | None = None
) -> tuple[History, RepairReport]:
    """A stored history whose request passes the oracle, and what it took (module docstring).

    ``thinking`` is whether the request is sent with extended thinking (``None``: as the oracle
    infers it, from the thinking blocks the request carries).
    """
    if orphans not in ORPHANS:
        from ctxmodel.errors import UsageError

        raise UsageError(f"repair: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    source = tuple(history)
    remaining = validate(request_of(source), thinking=thinking)
    if not remaining:
        return source, RepairReport(origins=tuple(range(len(source))))
    mask = visible_mask(source)
    deciders = _deciders(source, mask)
    work = _Work([_Entry(i, i, m, not mask[i], i in deciders) for i, m in enumerate(source)], source, orphans)
    for _ in range(4):
        made = len(work.changes)
        _round(work, thinking, remaining)
        if len(work.changes) == made:
            break  # nothing more it can do: what is left is unresolved
        messages, _ = _result(work)
        remaining = validate(request_of(messages), thinking=thinking)
        if not remaining:
            break
    messages, origins = _result(work)
    changes = sorted(work.changes, key=lambda c: (c.index, c.created))  # stable: in the order made
    return messages, RepairReport(tuple(changes), origins, tuple(remaining))
