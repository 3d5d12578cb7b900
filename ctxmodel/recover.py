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
each counter call applying the fudge once (the counter's declared ``fudge``). Recovery costs about
one count at every size (``benchmarks/bench_recover.py``): per-message raw sums are
computed once (the counter caches per block), the cut is chosen in one scan from their running
total, with the pairing comparison kept up to date as the scan goes instead of rebuilt per
candidate (:class:`_Pairing`), and its count follows from the sums; only kept prefixes of cut
blocks are encoded again.
"""

from __future__ import annotations

import math
import uuid
from bisect import bisect_left
from collections import Counter as Multiset
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import accumulate
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

import attrs

from ctxmodel.codec import dump
from ctxmodel.contract_data import (
    DEFAULT_RESERVE,
    FAILED_PREFIX,
    FLOOR_CHARS,
    MISSING_RESULT,
    SERVER_PENDING,
    UNEXPECTED_RESULT,
    allowed_tokens,
    marker_text,
    notice_text,
    reserve_for,
)
from ctxmodel.errors import UsageError
from ctxmodel.model import Block, History, Message, Opaque, Text, ToolResult, ToolUse
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

    #: The fudge factor applied once per call: ``(numerator, denominator)``, or a number.
    @property
    def fudge(self) -> tuple[int, int] | int | float | Fraction: ...

    def raw_text(self, text: str) -> int: ...

    def raw_block(self, block: Block) -> int: ...

    def count_blocks(self, blocks: Iterable[Block]) -> int: ...

    def count_messages(self, messages: Iterable[Message]) -> int: ...

    def count_text(self, text: str) -> int: ...


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


@attrs.frozen
class _Fudge:
    """``count = ceil(factor * raw)``, the counter's once-per-call rule (contract §5, domain §4.6).

    The factor is the counter's declared ``fudge`` (``ctxmodel.tokens.Counter.fudge``,
    ``(numerator, denominator)``; a positive number is accepted too). With it and the counter's
    raw block counts, a count is computed exactly as ``count_messages`` computes it, so the cut
    is chosen and its count reported without a recount. A counter without a ``fudge`` is a
    ``TypeError``: the factor used to be inferred from one count, which only bounded it.
    """

    factor: Fraction

    @classmethod
    def of(cls, counter: CounterLike) -> _Fudge:
        declared: object = getattr(counter, "fudge", None)
        if isinstance(declared, tuple) and len(declared) == 2:
            num, den = declared
            if _positive_number(num) and _positive_number(den):
                return cls(Fraction(num) / Fraction(den))
        elif isinstance(declared, int | float | Fraction) and _positive_number(declared):
            return cls(Fraction(declared))
        raise TypeError(
            f"counter {getattr(counter, 'name', counter)!r}: expected a fudge attribute, "
            f"(numerator, denominator) or a positive number, got {declared!r}"
        )

    def total(self, raw: int) -> int:
        return math.ceil(self.factor * raw)

    def max_raw(self, budget: int) -> int:
        """The largest raw sum whose count is ``<= budget`` (-1 when even 0 is over)."""
        if budget < 0:
            return -1
        return math.floor(budget / self.factor)


def _positive_number(value: object) -> bool:
    return isinstance(value, int | float | Fraction) and not isinstance(value, bool) and value > 0


# --------------------------------------------------------------------------------------------------
# Pairing as the API sees adjacency (contract §3 rules 1 and 4, §4 rule 4), per message.

_Issue = tuple[str, str]


class _Facts(NamedTuple):
    """What pairing needs of one message, read once (a message is read for itself and as the
    neighbour of two others)."""

    role: str
    uses: tuple[str, ...]  # ids of its tool_use blocks
    leading: frozenset[str]  # ids of the tool_result blocks its content starts with
    results: tuple[str, ...]  # ids of its tool_result blocks
    pending: tuple[str, ...]  # unresolved server tool call ids, sorted
    others: int  # blocks that are not tool_result blocks


def _facts(message: Message) -> _Facts:
    content = message.content
    if isinstance(content, str):
        return _Facts(message.role, (), frozenset(), (), (), 1)  # one text block
    uses: list[str] = []
    leading: set[str] = set()
    results: list[str] = []
    server: list[str] = []
    resolved: set[str] = set()
    others = 0
    lead = True
    for block in content:
        if isinstance(block, ToolResult):
            results.append(block.tool_use_id)
            if lead:
                leading.add(block.tool_use_id)
            continue
        lead = False
        others += 1
        if isinstance(block, ToolUse):
            uses.append(block.id)
        elif isinstance(block, Opaque):
            # Server tool calls and their results (domain §5.1; §7 A16).
            key = "id" if block.type == "server_tool_use" else "tool_use_id"
            value = block.fields.get(key)
            if not isinstance(value, str):
                continue
            if block.type == "server_tool_use":
                server.append(value)
            elif block.type.endswith("_tool_result") and block.type != "tool_result":
                resolved.add(value)
    pending = tuple(sorted(set(server) - resolved)) if server else ()
    return _Facts(message.role, tuple(uses), frozenset(leading), tuple(results), pending, others)


def _issues(prev: _Facts | None, message: _Facts, nxt: _Facts | None) -> list[_Issue]:
    """The pairing violations owned by ``message`` given its neighbours in a request.

    ``MISSING_RESULT``: a ``tool_use`` of a non-last assistant message whose id does not lead the
    next user message (§3 rule 1); ``UNEXPECTED_RESULT``: a ``tool_result`` whose id is not a
    ``tool_use`` of the assistant message right before (§3 rule 4); ``SERVER_PENDING``: a non-result block after an
    unresolved server tool call. Keyed by rule and tool id, as §4 rule 4 compares. Only adjacency
    changes when messages are hidden, so these are the only violations a cut can create.
    """
    out: list[_Issue] = []
    if message.role == "assistant" and nxt is not None:
        if message.uses:
            leading = nxt.leading if nxt.role == "user" else frozenset()
            out.extend((MISSING_RESULT, u) for u in message.uses if u not in leading)
        if message.pending and nxt.role == "user":
            # An unresolved server tool call lets only results follow (domain §5.1; §7 A16).
            out.extend((SERVER_PENDING, i) for i in message.pending for _ in range(nxt.others))
    if message.results:
        allowed = (
            frozenset(prev.uses) if message.role == "user" and prev is not None and prev.role == "assistant" else ()
        )
        out.extend((UNEXPECTED_RESULT, r) for r in message.results if r not in allowed)
    return out


def _holds_results_of(assistant: _Facts, user: _Facts) -> bool:
    """Whether ``user`` holds a result of one of ``assistant``'s calls: a pair never to split."""
    if assistant.role != "assistant" or user.role != "user" or not assistant.uses or not user.results:
        return False
    ids = set(assistant.uses)
    return any(r in ids for r in user.results)


# --------------------------------------------------------------------------------------------------
# Truncation (contract §4 rule 3 and the reference's choice).


@attrs.frozen
class _Cut:
    hidden: tuple[int, ...]  # input indices newly tagged
    first_kept: int  # input index of the first kept visible message (the marker goes before it)
    raw_after: int


#: Stands in for the new marker as a neighbour in the pairing check: a one-text ``user`` message,
#: whose issues and whose effect on its neighbours' issues do not depend on the number it states.
_NEW_MARKER = _facts(Message("user", marker_text(1)))


class _Pairing:
    """Whether the request a cut leaves holds a pairing violation more often than the input did.

    The request after hiding the taggable messages up to visible position ``p`` is
    ``[msgs[0], *old markers before p, NEW, msgs[p + 1], msgs[p + 2], ...]``. Past ``msgs[p + 1]``
    adjacency is the input's, so only that window's issues can be new (contract §4 rule 4). The
    window's issues are a part fixed as old markers join it (``chain``: the first message and each
    marker with its neighbours, the last of them next to NEW) plus the issues of ``msgs[p + 1]``
    after NEW. They are compared with the input's issues owned by positions ``<= p + 1``. Both sides
    only grow as ``p`` advances, so the count of issues where the chain alone already exceeds the
    input (``_bad``) is kept up to date, and each candidate costs its own message's issues.
    """

    def __init__(self, msgs: Sequence[_Facts], n: int, owner_issues: list[list[_Issue]]) -> None:
        self._msgs = msgs  # filled as the scan goes: up to p + 2 when candidate p is asked about
        self._n = n
        self._owner_issues = owner_issues
        self._owned: Multiset[_Issue] = Multiset()
        self._owned_upto = -1  # positions 0.._owned_upto are counted in _owned
        self._chain: Multiset[_Issue] = Multiset()
        self._bad = 0
        self._members = [0]  # visible positions of the window before NEW: msgs[0], then old markers
        self._last: list[_Issue] = _issues(None, msgs[0], _NEW_MARKER)
        self._add_chain(self._last, 1)

    def _set_bad(self, issue: _Issue, before: bool) -> None:
        after = self._chain[issue] > self._owned[issue]
        self._bad += after - before

    def _add_chain(self, issues: Iterable[_Issue], sign: int) -> None:
        for issue in issues:
            before = self._chain[issue] > self._owned[issue]
            self._chain[issue] += sign
            self._set_bad(issue, before)

    def own_up_to(self, last: int) -> None:
        """Count the input's issues owned by positions up to ``last``."""
        while self._owned_upto < last:
            self._owned_upto += 1
            for issue in self._owner_issues[self._owned_upto]:
                before = self._chain[issue] > self._owned[issue]
                self._owned[issue] += 1
                self._set_bad(issue, before)

    def add_marker(self, j: int) -> None:
        """Old marker ``msgs[j]`` joins the window (it stays visible when the cut passes it)."""
        msgs = self._msgs
        members = self._members
        last = members[-1]
        prev = msgs[members[-2]] if len(members) > 1 else None
        self._add_chain(self._last, -1)
        self._add_chain(_issues(prev, msgs[last], msgs[j]), 1)  # the former last, now before msgs[j]
        members.append(j)
        self._last = _issues(msgs[last], msgs[j], _NEW_MARKER)
        self._add_chain(self._last, 1)

    def allows(self, p: int) -> bool:
        """No issue of the window after hiding up to ``p`` is more frequent than in the input."""
        if self._bad:
            return False
        msgs = self._msgs
        tail = msgs[p + 2] if p + 2 < self._n else None
        own = _issues(_NEW_MARKER, msgs[p + 1], tail)
        if not own:
            return True
        chain, owned = self._chain, self._owned
        return all(chain[issue] + count <= owned[issue] for issue, count in Multiset(own).items())


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

    The reference's choice is :func:`_scan_cut`'s. Most calls are answered sooner: the first cut
    whose hidden messages alone free enough is found by bisection on their running raw total, and
    when it (or one of the next few) plainly passes every check, it is the answer; anything less
    plain goes to the scan.
    """
    n = len(visible)
    if n < 3:
        return None
    is_marker = [history[i].is_truncation_marker for i in visible]
    quick = _quick_fit(history, visible, raws, is_marker, counter, raw_budget, raw_total)
    if quick is not None:
        return quick
    return _scan_cut(history, visible, raws, is_marker, counter, fudge, raw_budget, raw_total)


#: How many candidates past the first that could fit :func:`_quick_fit` tries before the scan.
_QUICK_TRIES = 64


def _quick_fit(
    history: Sequence[Message],
    visible: list[int],
    raws: list[int],
    is_marker: list[bool],
    counter: CounterLike,
    raw_budget: int,
    raw_total: int,
) -> _Cut | None:
    """The scan's first fitting cut, when it can be told without the scan; else None.

    A candidate hiding up to visible position ``p`` cannot fit while its hidden messages alone
    leave more than ``raw_budget`` (counts are never negative), so the first possible fit is found
    by bisection on the running hidden total. From there, each candidate is decided as the scan
    decides it: a marker position or one whose results follow is no candidate; one that does not
    fit with its marker counted is passed over. The first fitting one is the answer when the window
    it leaves (``msgs[0]``, the old markers before it, the new marker, ``msgs[p + 1]``) owns no
    pairing issue at all, so no issue can be more frequent than in the input; a pair straddling an
    old marker, any issue in the window, or too many tries give None and the scan decides.
    """
    n = len(visible)
    hidden = list(accumulate(0 if j == 0 or is_marker[j] else raws[j] for j in range(n - 1)))
    first = bisect_left(hidden, raw_total - raw_budget, 1)  # first p whose hidden part frees enough
    if first > n - 2:
        return None
    facts: dict[int, _Facts] = {}

    def fact(j: int) -> _Facts:
        got = facts.get(j)
        if got is None:
            got = facts[j] = _facts(history[visible[j]])
        return got

    def pair(j: int) -> bool:
        return j + 1 < n and _holds_results_of(fact(j), fact(j + 1))

    if pair(0) and not is_marker[1]:
        return None  # no cut at all (msgs[1] holds the results of the first message): the scan says so
    markers = [j for j in range(1, first) if is_marker[j]]
    members = [0, *markers]  # the window before the new marker
    for j in markers:
        if (pair(j - 1) and j > 1 and not is_marker[j - 1]) or (pair(j) and not is_marker[j + 1]):
            return None  # a pair straddles an old marker in the span: the scan decides
    for w in range(len(members) - 1):
        prev = fact(members[w - 1]) if w else None
        if _issues(prev, fact(members[w]), fact(members[w + 1])):
            return None
    tries = 0
    for p in range(first, n - 1):
        if is_marker[p]:
            if (pair(p - 1) and p > 1 and not is_marker[p - 1]) or (pair(p) and not is_marker[p + 1]):
                return None
            prev = fact(members[-2]) if len(members) > 1 else None
            if _issues(prev, fact(members[-1]), fact(p)):
                return None
            members.append(p)
            continue
        tries += 1
        if tries > _QUICK_TRIES:
            return None
        if pair(p):
            continue
        k = p - len(members) + 1  # taggable messages in 1..p
        raw_after = raw_total - hidden[p] + counter.raw_block(Text(marker_text(k)))
        if raw_after > raw_budget:
            continue
        last_prev = fact(members[-2]) if len(members) > 1 else None
        if _issues(last_prev, fact(members[-1]), _NEW_MARKER):
            return None
        tail = fact(p + 2) if p + 2 < n else None
        if _issues(_NEW_MARKER, fact(p + 1), tail):
            return None
        return _Cut(tuple(visible[j] for j in range(1, p + 1) if not is_marker[j]), visible[p + 1], raw_after)
    return None


def _scan_cut(
    history: Sequence[Message],
    visible: list[int],
    raws: list[int],
    is_marker: list[bool],
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
    violation (rule, tool id) more often than the input's did (contract §4 rule 4).

    Linear in messages: one scan keeps the hidden raw sum, whether a pair straddles an old marker
    in the span, and the pairing comparison (:class:`_Pairing`) up to date. A cut's raw count is
    ``raw_total - hidden + marker`` with the marker's own raw count, which differs with ``k``; as
    counts are never negative, a cut whose hidden part alone leaves more than ``raw_budget`` cannot
    fit, so the marker is counted only where a fit is possible (first pass), and for the cut that
    lowers the count most (second pass, only when none fits) where ``fudge(raw_total - hidden)``
    alone does not already rule it out.
    """
    n = len(visible)
    # Per-position facts, computed as the scan reaches them (a cut that fits early reads few):
    # what pairing needs of msgs[j], pair[j] (msgs[j + 1] holds results of msgs[j]'s calls) and the
    # input's issues owned by msgs[j].
    msgs: list[_Facts] = []
    pair: list[bool] = []
    owner_issues: list[list[_Issue]] = []

    def reach(j: int) -> None:
        while len(pair) <= j:
            i = len(pair)
            while len(msgs) <= min(i + 1, n - 1):
                msgs.append(_facts(history[visible[len(msgs)]]))
            nxt = msgs[i + 1] if i + 1 < n else None
            pair.append(nxt is not None and _holds_results_of(msgs[i], nxt))
            owner_issues.append(_issues(msgs[i - 1] if i else None, msgs[i], nxt))

    reach(1)
    if pair[0] and not is_marker[1]:
        return None  # every cut hides msgs[1], which holds the results of the never-hidden first message
    pairing = _Pairing(msgs, n, owner_issues)
    marker_raw: dict[int, int] = {}

    def marker(k: int) -> int:
        got = marker_raw.get(k)
        if got is None:
            got = marker_raw[k] = counter.raw_block(Text(marker_text(k)))
        return got

    # Candidates that pass every check, in order: (visible position p of the last hidden, k, hidden raw).
    candidates: list[tuple[int, int, int]] = []
    straddled = False  # a pair joins an old marker in the span (it stays visible) to a hidden neighbour
    hidden_raw = 0
    k = 0
    fit: tuple[int, int, int] | None = None
    for p in range(1, n - 1):  # p: visible position of the k-th hidden message
        reach(p + 1)
        pairing.own_up_to(p + 1)
        if is_marker[p]:
            if (pair[p - 1] and p > 1 and not is_marker[p - 1]) or (pair[p] and not is_marker[p + 1]):
                straddled = True
            pairing.add_marker(p)
            continue
        k += 1
        hidden_raw += raws[p]
        if pair[p] or straddled:
            continue  # would separate msgs[p] (hidden) from its results, or a pair across an old marker
        if not pairing.allows(p):
            continue
        candidates.append((p, k, hidden_raw))
        if raw_total - hidden_raw <= raw_budget and raw_total - hidden_raw + marker(k) <= raw_budget:
            fit = (p, k, raw_total - hidden_raw + marker(k))  # the fewest messages that fit
            break
    if fit is None:
        best: tuple[int, int, int, int] | None = None  # (count, p, k, raw_after)
        for p, k, hidden in candidates:
            base = raw_total - hidden
            if best is not None and fudge.total(base) >= best[0]:
                continue  # the marker only adds: this cut cannot count less than the best
            raw_after = base + marker(k)
            count_after = fudge.total(raw_after)
            if best is None or count_after < best[0]:
                best = (count_after, p, k, raw_after)
        if best is None or best[0] >= fudge.total(raw_total):
            return None
        _, p, k, raw_after = best
        fit = (p, k, raw_after)
    p, k, raw_after = fit
    return _Cut(tuple(visible[j] for j in range(1, p + 1) if not is_marker[j]), visible[p + 1], raw_after)


def _apply_cut(history: Sequence[Message], cut: _Cut, truncation_id: str) -> History:
    """Tag the hidden messages and insert the one marker before the first kept (contract §4 rule 3)."""
    out = list(history)
    for i in cut.hidden:
        # Message.with_meta, without attrs.evolve's per-call introspection (thousands of messages).
        message = history[i]
        meta: dict[str, Any] = dict(message.meta)
        meta["truncationParent"] = truncation_id
        out[i] = Message(message.role, message.content, _frozen(meta))
    first = history[cut.first_kept]
    marker: dict[str, Any] = {}
    ts = first.ts
    if ts is not None:
        marker["ts"] = ts - 1
    marker["isTruncationMarker"] = True
    marker["truncationId"] = truncation_id
    out.insert(cut.first_kept, Message("user", marker_text(len(cut.hidden)), _frozen(marker)))
    return tuple(out)


def _frozen(meta: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(meta)


def _ids_in_use(history: Sequence[Message]) -> set[str]:
    keys = ("truncationId", "truncationParent", "condenseId", "condenseParent")
    return {v for m in history if m.meta for k in keys if isinstance(v := m.meta.get(k), str)}


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
    fudge = _Fudge.of(counts)
    system_tokens = counts.count_text(system_prompt)
    # One counting pass: per visible message raw sums (each block through the counter, cached), and
    # the count of the effective history from their total, as count_messages computes it (the
    # fudge once on the raw sum of all blocks).
    mask = visible_mask(source)
    visible = [i for i, keep in enumerate(mask) if keep]
    raws = [sum(counts.raw_block(b) for b in source[i].blocks) for i in visible]
    raw_total = sum(raws)
    prev = system_tokens + fudge.total(raw_total)

    def failed(reason: str) -> Recovery:
        # Contract §4 rule 8: the input unchanged, nothing removed, no id, the count unchanged.
        return Recovery(source, f"{FAILED_PREFIX}: {reason}", 0, prev, prev, None, allowed)

    if allowed <= 0:
        return failed(
            f"no room for context: allowed = floor(0.9 * {context_window}) - {reserve_for(max_tokens)} = {allowed}"
            " tokens (rule 1)"
        )
    if prev <= allowed:
        return Recovery(source, None, 0, prev, prev, None, allowed)  # rule 2: no change, no error
    if system_tokens > allowed:
        return failed(f"the system prompt alone counts {system_tokens} tokens, over the {allowed} allowed")

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

    # The count after the cut, from the counter's own raw counts: the hidden messages leave, the
    # marker comes in, nothing else changes visibility (the id is new), so this is the recount.
    new = system_tokens + fudge.total(raw_now)
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
