"""Pairing normalization: a request-ready history by the API's adjacency rules (contract §3).

The reference makes one strict choice wherever the contract allows several (contract §3
"Reference"): orphans dropped (or turned to text), a trailing ``tool_use`` left pending (or closed),
results in ``tool_use`` order, the first of duplicate results kept.

It works in two passes because contract §3 rule 5 "applies first":

1. Duplicate ``tool_use`` ids across the request are removed (with their results when the repeat is
   in a later message), and messages this empties are removed. Only then is adjacency known.
2. Each user message is paired against the message now before it: results of that message's
   ``tool_use`` blocks go first in ``tool_use`` order (missing ones synthesized), orphans are
   dropped or turned to text, everything else follows in its original order. A user message is
   inserted where an assistant ``tool_use`` message is followed by another assistant message.
   Whether a result is valid or an orphan is judged against the message before it in the input
   (rules 2 and 4), never against a neighbour that rule 5's removals brought next to it.

A stored history with hidden messages (contract §2) is judged on what is sent (contract §3): the
passes above run over its visible messages, adjacency taken between visible messages, and hidden
messages come back unchanged in their places. A visible message that decides what is hidden (the
last summary, a marker some ``truncationParent`` names) is never removed, even when emptied. A
truncation marker or a summary never receives results: when one follows an assistant ``tool_use``
message and holds none of its results, the synthetic results go into a user message inserted before
it (right after the assistant message), so the marker keeps the text agents recognize.

Why the output is a fixpoint (rule 7): a user message is only emptied in pass 2 when the message
before it has no ``tool_use`` (otherwise it receives results), so removing it changes what no other
message pairs against; pass 1 leaves no duplicate ``tool_use`` and pass 2 adds none; everything pass 2
emits already satisfies what pass 2 enforces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import attrs

from ctxmodel.codec import dump_block
from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.errors import UsageError
from ctxmodel.model import Block, History, Message, Text, ToolResult, ToolUse
from ctxmodel.visibility import visible_mask

__all__ = [
    "ORPHANS",
    "SYNTHETIC_TEXT",
    "TRAILING",
    "NormalizeReport",
    "normalize",
    "normalize_report",
    "orphan_text",
    "rule5",
    "synthetic_result",
]

#: The reference's synthetic result text (contract §3 "Reference"; Roo-Code's own wording, domain §4.1).
SYNTHETIC_TEXT = INTERRUPTED_TEXT

#: Orphan policies the reference accepts. ``any`` and ``relabel`` allow dropping every orphan
#: (contract §3 rule 4), so the reference honours them by dropping.
ORPHANS = ("drop", "to_text", "any", "relabel")
TRAILING = ("leave", "close")


def synthetic_result(tool_use_id: str) -> ToolResult:
    """The result standing in for one that never arrived: non-empty and marked (contract §3 rule 3)."""
    return ToolResult(tool_use_id, SYNTHETIC_TEXT, True)


def orphan_text(result: ToolResult) -> Text:
    """An orphan kept as text (contract §3 rule 4, ``to_text``), as Roo-Code does at append time.

    List content is compact JSON of its items (domain §2.3), so every text item's text survives.
    """
    content = result.content
    if content is None:
        body = ""
    elif isinstance(content, str):
        body = content
    else:
        body = json.dumps([dump_block(item, copy=False) for item in content], separators=(",", ":"), ensure_ascii=False)
    return Text(f"{CONVERSION_PREFIX}\n" + body)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _places(ids: Sequence[str], at: Sequence[int]) -> str:
    if len(at) != len(ids):
        return ", ".join(ids)
    return ", ".join(f"{i} (messages.{n})" for i, n in zip(ids, at, strict=True))


@attrs.frozen
class NormalizeReport:
    """What ``normalize`` changed, in the order met (tool ids; message indices as documented).

    The ``*_at`` fields run parallel to the id field they extend: the **input** index of the message
    the change was made in, so a person can find the place in the file they gave.
    Results of a ``tool_use`` removed by rule 5 are listed with ``duplicate_results_dropped``.
    """

    results_moved: tuple[str, ...] = ()
    synthesized: tuple[str, ...] = ()
    orphans_dropped: tuple[str, ...] = ()
    orphans_to_text: tuple[str, ...] = ()
    duplicate_results_dropped: tuple[str, ...] = ()
    duplicate_tool_uses_removed: tuple[str, ...] = ()
    #: Output indices of the messages normalization created.
    messages_inserted: tuple[int, ...] = ()
    #: Input indices of the messages normalization emptied and removed.
    messages_removed: tuple[int, ...] = ()
    results_moved_at: tuple[int, ...] = ()
    orphans_dropped_at: tuple[int, ...] = ()
    orphans_to_text_at: tuple[int, ...] = ()
    duplicate_results_dropped_at: tuple[int, ...] = ()
    duplicate_tool_uses_removed_at: tuple[int, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(
            self.results_moved
            or self.synthesized
            or self.orphans_dropped
            or self.orphans_to_text
            or self.duplicate_results_dropped
            or self.duplicate_tool_uses_removed
            or self.messages_inserted
            or self.messages_removed
        )

    def lines(self) -> list[str]:
        """One human line per kind of change; empty when nothing changed."""
        out: list[str] = []
        if self.duplicate_tool_uses_removed:
            n = len(self.duplicate_tool_uses_removed)
            places = _places(self.duplicate_tool_uses_removed, self.duplicate_tool_uses_removed_at)
            out.append(f"removed {_plural(n, 'duplicate tool_use')}: {places}")
        if self.duplicate_results_dropped:
            n = len(self.duplicate_results_dropped)
            places = _places(self.duplicate_results_dropped, self.duplicate_results_dropped_at)
            out.append(f"dropped {_plural(n, 'duplicate result')}: {places}")
        if self.orphans_dropped:
            n = len(self.orphans_dropped)
            places = _places(self.orphans_dropped, self.orphans_dropped_at)
            out.append(f"dropped {_plural(n, 'orphan result')}: {places}")
        if self.orphans_to_text:
            n = len(self.orphans_to_text)
            places = _places(self.orphans_to_text, self.orphans_to_text_at)
            out.append(f"turned {_plural(n, 'orphan result')} to text: {places}")
        if self.results_moved:
            n = len(self.results_moved)
            places = _places(self.results_moved, self.results_moved_at)
            out.append(f"moved {_plural(n, 'result')} to the front: {places}")
        if self.synthesized:
            out.append(f"synthesized {_plural(len(self.synthesized), 'result')}: {', '.join(self.synthesized)}")
        if self.messages_inserted:
            word = "message" if len(self.messages_inserted) == 1 else "messages"
            out.append(f"inserted {word} " + ", ".join(f"#{i}" for i in self.messages_inserted))
        if self.messages_removed:
            word = "message" if len(self.messages_removed) == 1 else "messages"
            out.append(f"removed emptied {word} " + ", ".join(f"#{i}" for i in self.messages_removed))
        return out


@attrs.define
class _Log:
    """The report under construction (mutable while one call runs, never shared)."""

    moved: list[tuple[str, int]] = attrs.Factory(list)
    synthesized: list[str] = attrs.Factory(list)
    orphans_dropped: list[tuple[str, int]] = attrs.Factory(list)
    orphans_to_text: list[tuple[str, int]] = attrs.Factory(list)
    dup_results: list[tuple[str, int]] = attrs.Factory(list)
    dup_uses: list[tuple[str, int]] = attrs.Factory(list)
    inserted: list[int] = attrs.Factory(list)
    removed: list[int] = attrs.Factory(list)

    def report(self) -> NormalizeReport:
        # Rule 5 runs over the whole history before pairing does: put its dropped results back in
        # message order among the pairing pass's duplicates (stable, so order within a message holds).
        self.dup_results.sort(key=lambda p: p[1])

        def ids(pairs: list[tuple[str, int]]) -> tuple[str, ...]:
            return tuple(p[0] for p in pairs)

        def at(pairs: list[tuple[str, int]]) -> tuple[int, ...]:
            return tuple(p[1] for p in pairs)

        return NormalizeReport(
            results_moved=ids(self.moved),
            synthesized=tuple(self.synthesized),
            orphans_dropped=ids(self.orphans_dropped),
            orphans_to_text=ids(self.orphans_to_text),
            duplicate_results_dropped=ids(self.dup_results),
            duplicate_tool_uses_removed=ids(self.dup_uses),
            messages_inserted=tuple(self.inserted),
            messages_removed=tuple(sorted(self.removed)),
            results_moved_at=at(self.moved),
            orphans_dropped_at=at(self.orphans_dropped),
            orphans_to_text_at=at(self.orphans_to_text),
            duplicate_results_dropped_at=at(self.dup_results),
            duplicate_tool_uses_removed_at=at(self.dup_uses),
        )


def _same(blocks: Sequence[Block], original: Sequence[Block]) -> bool:
    return len(blocks) == len(original) and all(a is b for a, b in zip(blocks, original, strict=True))


#: What rule 5 removed from a message: a later ``tool_use`` of an id used in an earlier message, a
#: repeat within one message, or a result (in the message right after) of a removed later one.
Rule5Removal = tuple[str, str]  # ("later-use" | "repeated-use" | "result-of-removed", tool id)


def rule5(messages: Sequence[Message]) -> list[tuple[tuple[Block, ...] | None, list[Rule5Removal]]]:
    """Contract §3 rule 5, the one implementation (``normalize`` and ``repair`` both apply it): each
    ``tool_use`` id once in the request. For each message, its blocks after the rule (``None`` when
    the rule left it as it was) and what the rule removed from it.

    The later block goes. When the repeat is in a later message, its results (in the message right
    after it) go too: they answer the removed call, and re-attaching them to the first would be the
    cross-wiring rule 2 forbids. Within one message the results stay: they pair with the first block.
    Only assistant messages' ``tool_use`` blocks take part (one elsewhere is a rule 8 defect).
    """
    seen: set[str] = set()
    kill: set[str] = set()  # ids whose results in this message answer a removed later tool_use
    out: list[tuple[tuple[Block, ...] | None, list[Rule5Removal]]] = []
    for message in messages:
        pending, kill = kill, set()
        content = message.content
        removed: list[Rule5Removal] = []
        if isinstance(content, str) or (message.role != "assistant" and not pending):
            out.append((None, removed))
            continue
        kept: list[Block] = []
        if message.role == "assistant":
            here: set[str] = set()
            for block in content:
                if isinstance(block, ToolUse):
                    if block.id in seen or block.id in here:
                        if block.id in seen:
                            kill.add(block.id)
                        removed.append(("later-use" if block.id in seen else "repeated-use", block.id))
                        continue
                    here.add(block.id)
                kept.append(block)
            seen |= here
        else:
            for block in content:
                if isinstance(block, ToolResult) and block.tool_use_id in pending:
                    removed.append(("result-of-removed", block.tool_use_id))
                    continue
                kept.append(block)
        out.append((None if _same(kept, content) else tuple(kept), removed))
    return out


def _dedupe_tool_uses(
    history: Sequence[tuple[int, Message]], log: _Log, keep: frozenset[int] = frozenset()
) -> list[tuple[int, Message]]:
    """Rule 5 (``rule5``) applied before any pairing, its removals logged. A message it empties is
    removed (unless ``keep`` holds its index: a visible message that decides what is hidden); an
    already-empty one passes through (rule 8)."""
    out: list[tuple[int, Message]] = []
    for (index, message), (kept, removed) in zip(history, rule5([m for _, m in history]), strict=True):
        for what, tool_id in removed:
            (log.dup_results if what == "result-of-removed" else log.dup_uses).append((tool_id, index))
        if kept is None:
            out.append((index, message))
        elif not kept and index not in keep:
            log.removed.append(index)
        else:
            out.append((index, message.with_content(kept)))
    return out


def _input_uses(staged: Sequence[tuple[int, Message]]) -> dict[int, tuple[str, ...]]:
    """Input index -> the ``tool_use`` ids an assistant message kept through rule 5.

    A result is valid only against the message right before it **in the input** (contract §3
    rules 2 and 4): when rule 5 removes that message, an orphan must not pair with the message that
    now precedes it — that would re-attach it to a call it never answered (domain §7 A8).
    """
    return {index: _uses(message) for index, message in staged if message.role == "assistant"}


def _pair(
    message: Message, index: int, uses: Sequence[str], valid: Sequence[str], orphans: str, log: _Log
) -> Message | None:
    """One user message paired against the ``tool_use`` ids ``uses`` of the message now before it.

    ``valid`` are the ids its results may answer: those of the message before it in the input (a
    subset of ``uses``; they differ only where rule 5 removed that message). Contract §3 rules 1-4
    and 6. Returns ``None`` when the message had blocks and pairing emptied it.
    """
    content = message.content
    if isinstance(content, str):
        if not uses:
            return message
        # Rule 6: string content becomes a text block after the results, only because results are added.
        # An empty string would become an empty text block, a defect we would have made: it goes.
        log.synthesized.extend(uses)
        tail: tuple[Block, ...] = (Text(content),) if content else ()
        return message.with_content(tuple(synthetic_result(u) for u in uses) + tail)
    wanted = set(valid)
    kept: dict[str, tuple[ToolResult, int]] = {}  # id -> (first valid result, its position in ``seq``)
    others: list[Block] = []
    seq = 0  # position among the blocks that stay (kept results, other blocks, orphan texts)
    for block in content:
        if isinstance(block, ToolResult):
            rid = block.tool_use_id
            if rid in wanted:
                if rid in kept:
                    log.dup_results.append((rid, index))  # rule 2: the first valid result wins
                else:
                    kept[rid] = (block, seq)
                    seq += 1
            elif orphans == "to_text":
                log.orphans_to_text.append((rid, index))
                others.append(orphan_text(block))
                seq += 1
            else:
                log.orphans_dropped.append((rid, index))
            continue
        others.append(block)
        seq += 1
    head: list[Block] = []
    position = 0
    for u in uses:
        if u in kept:
            result, was = kept[u]
            if was != position:
                log.moved.append((u, index))
            head.append(result)
            position += 1
        else:
            log.synthesized.append(u)
            head.append(synthetic_result(u))
    blocks = head + others
    if _same(blocks, content):
        return message
    if not blocks:
        return None
    return message.with_content(tuple(blocks))


def _uses(message: Message | None) -> tuple[str, ...]:
    if message is None or message.role != "assistant":
        return ()
    return tuple(b.id for b in message.tool_uses)


def _check(orphans: str, trailing: str) -> None:
    if orphans not in ORPHANS:
        raise UsageError(f"normalize: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    if trailing not in TRAILING:
        raise UsageError(f"normalize: trailing={trailing!r}: expected one of {'|'.join(TRAILING)}")


def _deciders(history: Sequence[Message], mask: Sequence[bool]) -> frozenset[int]:
    """Indices of the visible messages that decide what is hidden: the last summary, and markers
    whose ``truncationId`` some ``truncationParent`` names (contract §3: never removed)."""
    named = {m.truncation_parent for m in history if m.truncation_parent is not None}
    last_summary = next((i for i in range(len(history) - 1, -1, -1) if history[i].is_summary), None)
    out = {last_summary} if last_summary is not None else set()
    for i, message in enumerate(history):
        if mask[i] and message.is_truncation_marker and message.truncation_id in named:
            out.add(i)
    return frozenset(out)


def _holds_result_of(message: Message, ids: Sequence[str]) -> bool:
    wanted = set(ids)
    return any(isinstance(b, ToolResult) and b.tool_use_id in wanted for b in message.blocks)


def normalize_report(
    history: Iterable[Message], *, orphans: str = "drop", trailing: str = "leave"
) -> tuple[History, NormalizeReport]:
    """The request-ready history (contract §3) and what it took to get there.

    Pure: messages and blocks that need no change are returned as the input's own frozen objects,
    changed ones are new. Messages this creates carry only ``role`` and ``content``. Hidden messages
    (contract §2) are returned unchanged in their places; the report's input indices are indices
    of the input, hidden messages counted.
    """
    _check(orphans, trailing)
    source = tuple(history)
    mask = visible_mask(source)
    shown = [i for i, visible in enumerate(mask) if visible]
    keep = _deciders(source, mask) if len(shown) < len(source) else frozenset()
    previous = {i: (shown[k - 1] if k else None) for k, i in enumerate(shown)}
    log = _Log()
    staged = _dedupe_tool_uses([(i, source[i]) for i in shown], log, keep)
    input_uses = _input_uses(staged)
    # (input index, message) for kept input messages; (input index of the message it follows, message)
    # with ``inserted`` set for the ones normalization creates.
    out: list[tuple[int, Message, bool]] = []

    def insert_results(uses: Sequence[str]) -> None:
        log.synthesized.extend(uses)
        out.append((out[-1][0], Message("user", tuple(synthetic_result(u) for u in uses)), True))

    for index, message in staged:
        uses = _uses(out[-1][1] if out else None)
        if message.role == "user":
            before = previous[index]
            valid = [u for u in input_uses.get(before, ()) if u in uses] if before is not None else []
            if uses and (message.is_truncation_marker or message.is_summary) and not _holds_result_of(message, valid):
                insert_results(uses)  # a marker or summary never receives results (module docstring)
                uses, valid = (), []
            paired = _pair(message, index, uses, valid, orphans, log)
            if paired is None and index in keep:
                paired = message.with_content(())
            if paired is None:
                log.removed.append(index)
            else:
                out.append((index, paired, False))
            continue
        if uses:  # rule 3: an assistant tool_use message followed by another assistant message
            insert_results(uses)
        out.append((index, message, False))
    if trailing == "close":
        uses = _uses(out[-1][1] if out else None)
        if uses:
            insert_results(uses)
    if len(shown) == len(source):
        result = tuple(m for _, m, _ in out)
        log.inserted.extend(k for k, (_, _, new) in enumerate(out) if new)
        return result, log.report()
    # Splice the visible output back among the hidden messages: what normalization made of a visible
    # message goes where it was, a created message right after the message it follows.
    placed: dict[int, list[tuple[Message, bool]]] = {}
    for index, message, new in out:
        placed.setdefault(index, []).append((message, new))
    spliced: list[Message] = []
    for index, message in enumerate(source):
        if not mask[index]:
            spliced.append(message)
            continue
        for made, new in placed.get(index, ()):
            if new:
                log.inserted.append(len(spliced))
            spliced.append(made)
    return tuple(spliced), log.report()


def normalize(history: Iterable[Message], *, orphans: str = "drop", trailing: str = "leave") -> History:
    """The request-ready history of contract §3 (see :func:`normalize_report`)."""
    return normalize_report(history, orphans=orphans, trailing=trailing)[0]
