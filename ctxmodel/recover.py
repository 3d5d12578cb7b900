"""The context-recovery reference: sliding-window truncation, then degradation (contract §4).

Why this shape (domain §3.3, §3.7): the agents in the field truncate a fixed fraction of the visible
messages and report success even when nothing was removed, so a history of one task, one tool call
and one oversized result loops forever over budget. The reference instead

1. hides the *fewest* oldest visible messages that bring the count within budget (or, if none does,
   the cut that lowers it most), by tagging, with one marker per call, never splitting a tool pair
   and never creating a pairing violation the input did not already have;
2. then cuts the largest visible textual tool results to a prefix (at least 200 characters) with a
   notice, each strictly shorter in characters and tokens;
3. succeeds only within budget, and otherwise returns a controlled error with the input unchanged.

Counting follows contract §4: ``count_text(systemPrompt) + count_messages(effective history)``,
each counter call applying the fudge once. To stay within one counting pass on megabyte histories,
per-message raw sums are computed once (the counter caches per block) and the cut is found with
prefix sums; only kept prefixes of cut blocks are encoded again.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter as Multiset
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Protocol

import attrs

from ctxmodel.codec import dump
from ctxmodel.errors import UsageError
from ctxmodel.model import Block, History, Message, Opaque, Text, ToolResult
from ctxmodel.visibility import effective, visible_mask

__all__ = [
    "DEFAULT_RESERVE",
    "FAILED_PREFIX",
    "FLOOR_CHARS",
    "CounterLike",
    "Degraded",
    "Recovery",
    "allowed_tokens",
    "marker_text",
    "notice_text",
    "recover",
]

#: The reserve when ``maxTokens <= 0`` (domain §3.1, ``ANTHROPIC_DEFAULT_MAX_TOKENS``; contract §4).
DEFAULT_RESERVE = 8192
#: A degraded tool-result text keeps at least this many characters (contract §4, domain §3.7).
FLOOR_CHARS = 200
#: Every controlled error starts with this (contract §4 rule 8).
FAILED_PREFIX = "Context window recovery failed"
#: How often a cut length is re-estimated on the kept prefix before moving to the next block.
_MAX_CUT_ATTEMPTS = 4
#: Tokens of slack left per cut for BPE effects where the prefix meets the notice (domain §7 D10).
_BOUNDARY_SLACK = 2


class CounterLike(Protocol):
    """The pinned ``ctxmodel.tokens.Counter`` interface, as far as recovery uses it (contract §5).

    A protocol rather than the concrete class so tests can inject a counter of their own.
    """

    @property
    def name(self) -> str: ...

    def raw_text(self, text: str) -> int: ...

    def raw_block(self, block: Block) -> int: ...

    def count_blocks(self, blocks: Iterable[Block]) -> int: ...

    def count_messages(self, messages: Iterable[Message]) -> int: ...

    def count_text(self, text: str) -> int: ...


def marker_text(hidden: int) -> str:
    """The marker's content, as the field writes it (domain §2.1, §3.3; contract §4 reference)."""
    return f"[Sliding window truncation: {hidden} messages hidden to reduce context]"


def notice_text(removed: int) -> str:
    """The notice appended to a cut tool result (domain §3.7; contract §4 reference)."""
    return f"\n[Tool result truncated: {removed} characters removed to fit the context budget]"


def allowed_tokens(context_window: int, max_tokens: int) -> int:
    """``floor(0.9 * contextWindow) - reserve`` in integers (contract §4 budget).

    Integer arithmetic because ``0.9 * W`` in floats is off by one for some windows (``0.9 * 10``
    is ``9.000000000000002``, harmless, but ``0.9 * 30`` is ``27.000000000000004`` and
    ``0.9 * 70`` is ``63.00000000000001``: floors agree, yet nothing guarantees it in general).
    """
    reserve = max_tokens if max_tokens > 0 else DEFAULT_RESERVE
    return (9 * context_window) // 10 - reserve


@attrs.frozen
class Degraded:
    """One cut tool-result text (contract §4 rule 5), reported so a user can see what was lost.

    ``path`` names the text in the result history: ``messages.N.content.M.content`` for string
    content, ``messages.N.content.M.content.K`` for a text item. Token figures are the counter's
    count of the whole ``tool_result`` block (fudge applied), before and after.
    """

    path: str
    before_chars: int
    after_chars: int
    before_tokens: int
    after_tokens: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "beforeChars": self.before_chars,
            "afterChars": self.after_chars,
            "beforeTokens": self.before_tokens,
            "afterTokens": self.after_tokens,
        }


@attrs.frozen
class Recovery:
    """The outcome of one ``recover`` call: the fields of the contract §7 recover result."""

    messages: History
    error: str | None
    messages_removed: int
    prev_context_tokens: int
    new_context_tokens: int
    truncation_id: str | None
    allowed: int
    degraded: tuple[Degraded, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The contract §7 result, plus the extra keys ``allowed`` and ``degraded``."""
        return {
            "messages": dump(self.messages),
            "error": self.error,
            "messagesRemoved": self.messages_removed,
            "prevContextTokens": self.prev_context_tokens,
            "newContextTokens": self.new_context_tokens,
            "truncationId": self.truncation_id,
            "allowed": self.allowed,
            "degraded": [d.to_json() for d in self.degraded],
        }


def _uuid_hex() -> str:
    return uuid.uuid4().hex


def _resolve_counter(counter: str | CounterLike) -> CounterLike:
    if isinstance(counter, str):
        from ctxmodel.tokens import get_counter

        return get_counter(counter)
    return counter


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name}: expected an integer, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------------------------------
# The fudge: the count of a call is a monotone function of the raw sum of its blocks (contract §5).


def _simplest_between(lo: Fraction, hi: Fraction, max_denominator: int = 64) -> Fraction:
    """The rational with the smallest denominator in ``(lo, hi]`` (``hi`` when none is small)."""
    for d in range(1, max_denominator + 1):
        num = math.floor(hi * d)
        if Fraction(num, d) > lo:
            return Fraction(num, d)
    return hi


@attrs.frozen
class _Fudge:
    """``count = ceil(factor * raw)``, the counter's once-per-call rule (contract §5, domain §4.6).

    The pinned counter interface does not expose the factor, so it is read from a ``fudge``
    attribute when the counter has one (a number, or ``(numerator, denominator)``), else inferred
    from one whole count: ``C = ceil(f * R)`` puts ``f`` in ``((C - 1) / R, C / R]`` and the
    simplest rational there is 3/2 for the ``zoo`` counter and 1 for the raw ones. Every decision
    taken with it is re-checked with the counter itself before a success is reported, so an
    inference error costs optimality, never correctness.
    """

    factor: Fraction

    @classmethod
    def of(cls, counter: CounterLike, raw: int, counted: int) -> _Fudge:
        declared = getattr(counter, "fudge", None)
        if isinstance(declared, tuple) and len(declared) == 2 and all(isinstance(x, int) for x in declared):
            num, den = declared  # (numerator, denominator), as ctxmodel.tokens.Counter declares it
            if num > 0 and den > 0:
                return cls(Fraction(num, den))
        if isinstance(declared, int | float | Fraction) and not isinstance(declared, bool) and declared > 0:
            return cls(Fraction(declared))
        if raw <= 0 or counted <= 0:
            return cls(Fraction(1))
        return cls(_simplest_between(Fraction(counted - 1, raw), Fraction(counted, raw)))

    def total(self, raw: int) -> int:
        return math.ceil(self.factor * raw)

    def max_raw(self, budget: int) -> int:
        """The largest raw sum whose count is ``<= budget`` (-1 when even 0 is over)."""
        if budget < 0:
            return -1
        return math.floor(budget / self.factor)


# --------------------------------------------------------------------------------------------------
# Pairing as the API sees adjacency (contract §3 rules 1 and 4, §4 rule 4), per message.

_Issue = tuple[str, str]


def _tool_use_ids(message: Message | None) -> list[str]:
    if message is None or message.role != "assistant":
        return []
    return [b.id for b in message.tool_uses]


def _leading_result_ids(message: Message) -> set[str]:
    ids: set[str] = set()
    for block in message.blocks:
        if not isinstance(block, ToolResult):
            break
        ids.add(block.tool_use_id)
    return ids


def _issues(prev: Message | None, message: Message, nxt: Message | None) -> list[_Issue]:
    """The pairing violations owned by ``message`` given its neighbours in a request.

    ``missing``: a ``tool_use`` of a non-last assistant message whose id does not lead the next
    user message (§3 rule 1); ``unexpected``: a ``tool_result`` whose id is not a ``tool_use`` of the
    assistant message right before (§3 rule 4); ``server-pending``: a non-result block after an
    unresolved server tool call. Keyed by rule and tool id, as §4 rule 4 compares. Only adjacency
    changes when messages are hidden, so these are the only violations a cut can create.
    """
    out: list[_Issue] = []
    if message.role == "assistant" and nxt is not None:
        uses = message.tool_uses
        if uses:
            leading = _leading_result_ids(nxt) if nxt.role == "user" else set()
            out.extend(("missing", u.id) for u in uses if u.id not in leading)
        pending = _pending_server_ids(message)
        if pending and nxt.role == "user":
            # An unresolved server tool call lets only results follow (domain §5.1; §7 A16).
            others = sum(1 for b in nxt.blocks if not isinstance(b, ToolResult))
            out.extend(("server-pending", i) for i in pending for _ in range(others))
    results = message.tool_results
    if results:
        allowed = set(_tool_use_ids(prev)) if message.role == "user" else set()
        out.extend(("unexpected", r.tool_use_id) for r in results if r.tool_use_id not in allowed)
    return out


def _pending_server_ids(message: Message) -> list[str]:
    uses: list[str] = []
    resolved: set[str] = set()
    for block in message.blocks:
        if isinstance(block, Opaque):
            key = "id" if block.type == "server_tool_use" else "tool_use_id"
            value = block.fields.get(key)
            if not isinstance(value, str):
                continue
            if block.type == "server_tool_use":
                uses.append(value)
            elif block.type.endswith("_tool_result") and block.type != "tool_result":
                resolved.add(value)
    return sorted(set(uses) - resolved)


def _holds_results_of(assistant: Message, user: Message) -> bool:
    """Whether ``user`` holds a result of one of ``assistant``'s calls: a pair never to split."""
    if assistant.role != "assistant" or user.role != "user":
        return False
    ids = set(_tool_use_ids(assistant))
    return bool(ids) and any(r.tool_use_id in ids for r in user.tool_results)


# --------------------------------------------------------------------------------------------------
# Truncation (contract §4 rule 3 and the reference's choice).


@attrs.frozen
class _Cut:
    hidden: tuple[int, ...]  # input indices newly tagged
    first_kept: int  # input index of the first kept visible message (the marker goes before it)
    raw_after: int


def _plan_cut(
    history: Sequence[Message],
    visible: list[int],
    raws: list[int],
    counter: CounterLike,
    fudge: _Fudge,
    raw_budget: int,
    raw_total: int,
) -> _Cut | None:
    """The fewest oldest visible messages to hide, or else the cut that lowers the count most.

    Candidates hide the first ``k`` taggable visible messages (not the first visible one, not
    markers); the first kept is the next visible message, so the last visible message is never
    tagged. A cut is refused when it splits a tool pair (so the assistant whose results the last
    visible message holds is never tagged) or when the request it leaves would hold a pairing
    violation (rule, tool id) more often than the input's did (contract §4 rule 4). Token sums come
    from ``raws`` prefix sums: no recount per candidate.
    """
    n = len(visible)
    if n < 3:
        return None
    msgs = [history[i] for i in visible]
    is_marker = [m.is_truncation_marker for m in msgs]
    pair = [j + 1 < n and _holds_results_of(msgs[j], msgs[j + 1]) for j in range(n)]

    # Old issues per owner (visible order), and per key the owners' positions, for prefix counts.
    positions: dict[_Issue, list[int]] = {}
    for j in range(n):
        for issue in _issues(msgs[j - 1] if j else None, msgs[j], msgs[j + 1] if j + 1 < n else None):
            positions.setdefault(issue, []).append(j)  # appended in increasing j: already sorted

    def owned_up_to(issue: _Issue, last: int) -> int:
        pos = positions.get(issue)
        if not pos:
            return 0
        lo, hi = 0, len(pos)
        while lo < hi:
            mid = (lo + hi) // 2
            if pos[mid] <= last:
                lo = mid + 1
            else:
                hi = mid
        return lo

    marker_positions = [j for j in range(1, n) if is_marker[j]]
    # An old marker in the hidden span stays visible: a pair joining it to a hidden neighbour splits.
    straddles = {
        j: (pair[j - 1] and j > 1 and not is_marker[j - 1]) or (j + 1 < n and pair[j] and not is_marker[j + 1])
        for j in marker_positions
    }
    marker_raw: dict[int, int] = {}

    if pair[0] and not is_marker[1]:
        return None  # every cut hides msgs[1], which holds the results of the never-hidden first message
    best: tuple[int, int, _Cut] | None = None  # (count, k, cut)
    current = fudge.total(raw_total)
    hidden_raw = 0
    k = 0
    for p in range(1, n - 1):  # p: visible position of the k-th hidden message
        if is_marker[p]:
            continue
        k += 1
        hidden_raw += raws[p]
        if pair[p]:
            continue  # would separate msgs[p] (hidden) from its results msgs[p + 1] (kept)
        span_markers = [j for j in marker_positions if j < p]
        if any(straddles[j] for j in span_markers):
            continue  # a pair would straddle an old marker that stays visible
        if k not in marker_raw:
            marker_raw[k] = counter.raw_block(Text(marker_text(k)))
        raw_after = raw_total - hidden_raw + marker_raw[k]
        count_after = fudge.total(raw_after)
        if best is not None and count_after >= best[0] and raw_after > raw_budget:
            continue
        # Pairing check: the request after is [msgs[0], *span markers, NEW, msgs[p + 1], ...].
        new_marker = Message("user", marker_text(k))
        window: list[Message] = [msgs[0], *(msgs[j] for j in span_markers), new_marker, msgs[p + 1]]
        tail = msgs[p + 2] if p + 2 < n else None
        local: Multiset[_Issue] = Multiset()
        for w, message in enumerate(window):
            prev = window[w - 1] if w else None
            nxt = window[w + 1] if w + 1 < len(window) else tail
            local.update(_issues(prev, message, nxt))
        if any(count > owned_up_to(issue, p + 1) for issue, count in local.items()):
            continue
        cut = _Cut(tuple(visible[j] for j in range(1, p + 1) if not is_marker[j]), visible[p + 1], raw_after)
        if raw_after <= raw_budget:
            return cut  # the fewest messages that fit
        if best is None or count_after < best[0]:
            best = (count_after, k, cut)
    if best is None or best[0] >= current:
        return None
    return best[2]


def _apply_cut(history: Sequence[Message], cut: _Cut, truncation_id: str) -> History:
    """Tag the hidden messages and insert the one marker before the first kept (contract §4 rule 3)."""
    hidden = set(cut.hidden)
    out: list[Message] = []
    for i, message in enumerate(history):
        if i == cut.first_kept:
            meta: dict[str, Any] = {}
            ts = message.ts
            if ts is not None:
                meta["ts"] = ts - 1
            meta["isTruncationMarker"] = True
            meta["truncationId"] = truncation_id
            out.append(Message("user", marker_text(len(hidden)), _frozen(meta)))
        out.append(message.with_meta(truncationParent=truncation_id) if i in hidden else message)
    return tuple(out)


def _frozen(meta: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(meta)


def _ids_in_use(history: Sequence[Message]) -> set[str]:
    keys = ("truncationId", "truncationParent", "condenseId", "condenseParent")
    return {v for m in history for k in keys if isinstance(v := m.meta.get(k), str)}


# --------------------------------------------------------------------------------------------------
# Degradation (contract §4 rule 5 and the reference's choice).


@attrs.frozen
class _Unit:
    """One textual tool-result text: string content (``item`` None) or a text item of list content."""

    message: int  # index in the truncated history
    block: int
    item: int | None
    chars: int


def _units(history: Sequence[Message], mask: list[bool]) -> list[_Unit]:
    """Visible textual tool-result texts, largest first (ties: earliest), per contract §4 rule 5."""
    units: list[_Unit] = []
    for i, message in enumerate(history):
        if not mask[i] or isinstance(message.content, str):
            continue
        for b, block in enumerate(message.content):
            if not isinstance(block, ToolResult):
                continue
            if isinstance(block.content, str):
                units.append(_Unit(i, b, None, len(block.content)))
            elif block.content is not None:
                for k, item in enumerate(block.content):
                    if isinstance(item, Text):
                        units.append(_Unit(i, b, k, len(item.text)))
    units.sort(key=lambda u: (-u.chars, u.message, u.block, -1 if u.item is None else u.item))
    return units


def _text_of(block: ToolResult, item: int | None) -> str:
    if item is None:
        assert isinstance(block.content, str)
        return block.content
    assert isinstance(block.content, tuple)
    text = block.content[item]
    assert isinstance(text, Text)
    return text.text


def _with_text(block: ToolResult, item: int | None, text: str) -> ToolResult:
    """The block with one text replaced: id, ``is_error``, other items and order untouched (rule 5)."""
    if item is None:
        return attrs.evolve(block, content=text)
    assert isinstance(block.content, tuple)
    items = list(block.content)
    old = items[item]
    assert isinstance(old, Text)
    items[item] = attrs.evolve(old, text=text)
    return attrs.evolve(block, content=tuple(items))


def _textual_chars(block: ToolResult) -> int:
    if isinstance(block.content, str):
        return len(block.content)
    if block.content is None:
        return 0
    return sum(len(i.text) for i in block.content if isinstance(i, Text))


def _cut_text(text: str, keep: int) -> str:
    return text[:keep] + notice_text(len(text) - keep)


def _shrink(
    block: ToolResult, item: int | None, counter: CounterLike, raw_to_free: int
) -> tuple[ToolResult, int] | None:
    """Cut one text to a prefix plus notice, sized to free ``raw_to_free`` raw tokens.

    The prefix length comes from the characters per token measured on the block (its raw count is
    already cached), reserving the notice's tokens; then only the kept prefix is counted, and the
    length re-estimated a few times on that small slice. Returns the new block and its raw count,
    or None when no cut makes the block strictly shorter in characters and tokens (contract §4
    rule 5; domain §3.7 reviewer finding 1: a notice must never make a block longer).
    """
    text = _text_of(block, item)
    old_raw = counter.raw_block(block)
    if old_raw <= 0 or len(text) <= FLOOR_CHARS:
        return None
    chars_per_token = max(_textual_chars(block), 1) / old_raw
    notice_raw = counter.raw_text(notice_text(len(text)))
    keep_tokens = len(text) / chars_per_token - raw_to_free - notice_raw - _BOUNDARY_SLACK
    keep = max(FLOOR_CHARS, math.floor(keep_tokens * chars_per_token))
    best: tuple[ToolResult, int] | None = None
    for _ in range(_MAX_CUT_ATTEMPTS):
        new_text = _cut_text(text, keep)
        if len(new_text) >= len(text):
            # The notice outweighs the characters cut: a dense tail (emoji, CJK) frees the tokens in
            # fewer characters than the notice adds. Cut that many more, still a prefix >= the floor;
            # giving up here made a result slightly over budget unrecoverable.
            shorter = max(FLOOR_CHARS, keep - (len(new_text) - len(text)) - 1)
            if shorter >= keep:
                return best
            keep = shorter
            continue
        new_block = _with_text(block, item, new_text)
        new_raw = counter.raw_block(new_block)
        if item is not None and new_raw < old_raw:
            # A text item is a block of its own: it must shrink in tokens too (contract §4 rule 5).
            if counter.raw_block(Text(new_text)) >= counter.raw_block(Text(text)):
                new_raw = old_raw
        if new_raw < old_raw:
            best = (new_block, new_raw)
        freed = old_raw - new_raw
        if freed >= raw_to_free or keep <= FLOOR_CHARS:
            return best
        # Not enough: re-measure on the prefix just counted and cut further.
        prefix_cpt = len(new_text) / max(new_raw, 1)
        smaller = max(FLOOR_CHARS, keep - math.ceil((raw_to_free - freed + _BOUNDARY_SLACK) * prefix_cpt))
        if smaller >= keep:
            return best
        keep = smaller
    return best


# --------------------------------------------------------------------------------------------------


def recover(
    history: Sequence[Message],
    *,
    context_window: int,
    max_tokens: int,
    system_prompt: str = "",
    total_tokens: int | None = None,
    counter: str | CounterLike = "zoo",
    new_id: Callable[[], str] = _uuid_hex,
) -> Recovery:
    """Bring a history within ``allowed`` tokens, or say why not (contract §4).

    ``total_tokens`` (the harness's count of the input less its last message, how Roo-Code and
    Zoo-Code are driven) is accepted and ignored: the contract judges every budget decision by the
    recount, so the reference decides and reports with its own count of the whole request.
    ``new_id`` makes the one ``truncationId`` per call; it is only called when a cut is made.
    """
    context_window = _check_int("contextWindow", context_window)
    max_tokens = _check_int("maxTokens", max_tokens)
    if total_tokens is not None:
        _check_int("totalTokens", total_tokens)
    if not isinstance(system_prompt, str):
        raise UsageError(f"systemPrompt: expected a string, got {type(system_prompt).__name__}")
    counts = _resolve_counter(counter)
    source: History = tuple(history)
    allowed = allowed_tokens(context_window, max_tokens)
    system_tokens = counts.count_text(system_prompt)
    prev = system_tokens + counts.count_messages(effective(source))

    def failed(reason: str) -> Recovery:
        # Contract §4 rule 8: the input unchanged, nothing removed, no id, the count unchanged.
        return Recovery(source, f"{FAILED_PREFIX}: {reason}", 0, prev, prev, None, allowed)

    if allowed <= 0:
        reserve = max_tokens if max_tokens > 0 else DEFAULT_RESERVE
        return failed(
            f"no room for context: allowed = floor(0.9 * {context_window}) - {reserve} = {allowed} tokens (rule 1)"
        )
    if prev <= allowed:
        return Recovery(source, None, 0, prev, prev, None, allowed)  # rule 2: no change, no error
    if system_tokens > allowed:
        return failed(f"the system prompt alone counts {system_tokens} tokens, over the {allowed} allowed")

    mask = visible_mask(source)
    visible = [i for i, keep in enumerate(mask) if keep]
    raws = [sum(counts.raw_block(b) for b in source[i].blocks) for i in visible]
    raw_total = sum(raws)
    fudge = _Fudge.of(counts, raw_total, prev - system_tokens)
    raw_budget = fudge.max_raw(allowed - system_tokens)

    # 1. Truncation.
    work = source
    truncation_id: str | None = None
    removed = 0
    cut = _plan_cut(source, visible, raws, counts, fudge, raw_budget, raw_total)
    raw_now = raw_total
    if cut is not None:
        in_use = _ids_in_use(source)
        for _ in range(10):
            candidate = new_id()
            if candidate not in in_use:
                truncation_id = candidate
                break
        if truncation_id is None:
            return failed("the id factory kept returning ids already used in the history")
        work = _apply_cut(source, cut, truncation_id)
        removed = len(cut.hidden)
        raw_now = cut.raw_after

    new = system_tokens + counts.count_messages(effective(work))
    # 2. Degradation, within what remains visible (one predicate: visible_mask).
    degraded: list[Degraded] = []
    if new > allowed:
        work_mask = visible_mask(work)
        edited = list(work)
        raw_target = raw_budget
        for unit in _units(work, work_mask):
            if new <= allowed:
                break
            message = edited[unit.message]
            assert not isinstance(message.content, str)
            block = message.content[unit.block]
            assert isinstance(block, ToolResult)
            to_free = max(raw_now - raw_target, 1)
            shrunk = _shrink(block, unit.item, counts, to_free)
            if shrunk is None:
                continue
            new_block, new_raw = shrunk
            old_raw = counts.raw_block(block)
            blocks = list(message.content)
            blocks[unit.block] = new_block
            edited[unit.message] = message.with_content(tuple(blocks))
            raw_now += new_raw - old_raw
            text_before = _text_of(block, unit.item)
            text_after = _text_of(new_block, unit.item)
            path = f"messages.{unit.message}.content.{unit.block}.content"
            if unit.item is not None:
                path += f".{unit.item}"
            degraded.append(
                Degraded(
                    path,
                    len(text_before),
                    len(text_after),
                    counts.count_blocks([block]),
                    counts.count_blocks([new_block]),
                )
            )
            if raw_now <= raw_target:
                # The estimate says it fits: confirm with the counter itself (the recount decides).
                new = system_tokens + counts.count_messages(effective(edited))
                if new > allowed:
                    raw_target = min(raw_target, raw_now) - 1  # the fudge guess was off: aim lower
        work = tuple(edited)
        if degraded:
            new = system_tokens + counts.count_messages(effective(work))

    if new > allowed:
        done = f"hiding {removed} messages and shrinking {len(degraded)} tool results"
        if removed == 0 and not degraded:
            return failed(
                "removed 0 messages and no eligible text tool result could be shrunk; "
                f"{prev} tokens > {allowed} allowed"
            )
        return failed(f"{done} leaves {new} tokens, over the {allowed} allowed (from {prev})")
    return Recovery(work, None, removed, prev, new, truncation_id, allowed, tuple(degraded))
