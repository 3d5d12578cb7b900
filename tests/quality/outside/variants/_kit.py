"""Shared scaffolding for the outside variants (not a variant itself: the runner skips ``_`` modules).

``Agent`` behaves as ctxmodel's reference does (contract §2-§5), but split into the code paths an
agent's developer writes as separate functions, so that each variant overrides exactly one of them:

- visibility: :meth:`Agent.visible` (the one predicate) and :meth:`Agent.effective_history`;
- pairing: :meth:`Agent.dedupe_tool_uses`, :meth:`Agent.pair`, :meth:`Agent.synthetic`;
- recovery: :meth:`Agent.cut_candidates` / :meth:`Agent.choose_cut` (the cut choice),
  :meth:`Agent.candidates` (the candidate scan), :meth:`Agent.shrink` (one cut with its notice),
  :meth:`Agent.degrade` (the degradation loop, recounting after each cut), :meth:`Agent.recount`, :meth:`Agent.decide`
  (the success decision).

The bodies are ported from the reference at the baseline commit (``visibility.py``, ``normalize.py``,
``recover.py``), using only ctxmodel's public names (model, codec, tokens and the constants of
``recover``/``normalize``), so a variant runs the same against any checkout. One deliberate
difference: the degradation loop recounts after every cut instead of steering by an estimate (the
"loop until the recount shrinks" of domain §3.7's review), a choice the contract leaves open. A
subclass that overrides nothing is ``legit_control``: it must pass the gate.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter as Multiset
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs

import ctxmodel
from ctxmodel import codec
from ctxmodel.model import Block, History, Message, Opaque, Text, ToolResult, ToolUse
from ctxmodel.normalize import orphan_text, synthetic_result
from ctxmodel.recover import FAILED_PREFIX, FLOOR_CHARS, allowed_tokens, marker_text, notice_text
from ctxmodel.tokens import get_counter

# What a variant may import from here: the kit's own names and the ctxmodel names the variants use.
__all__ = [
    "BOUNDARY_SLACK",
    "FLOOR_CHARS",
    "MAX_CUT_ATTEMPTS",
    "OPS",
    "Agent",
    "Cut",
    "Issue",
    "Message",
    "Text",
    "ToolResult",
    "ToolUse",
    "Unit",
    "allowed_tokens",
    "cut_text",
    "declare",
    "holds_results_of",
    "issues",
    "leading_result_ids",
    "notice_text",
    "orphan_text",
    "pending_server_ids",
    "same",
    "text_of",
    "textual_chars",
    "uses_of",
    "with_text",
]

OPS = ("describe", "normalize", "effective", "request", "recover", "count")
BOUNDARY_SLACK = 2
MAX_CUT_ATTEMPTS = 4

Issue = tuple[str, str]


@attrs.frozen
class Cut:
    hidden: tuple[int, ...]  # input indices newly tagged
    first_kept: int  # input index of the first kept visible message (the marker goes before it)
    raw_after: int  # estimated raw tokens of the visible messages after the cut, marker included
    k: int  # how many messages it hides


@attrs.frozen
class Unit:
    """One textual tool-result text: string content (``item`` None) or a text item of list content."""

    message: int
    block: int
    item: int | None
    chars: int


def uses_of(message: Message | None) -> tuple[str, ...]:
    if message is None or message.role != "assistant":
        return ()
    return tuple(b.id for b in message.tool_uses)


def same(blocks: Sequence[Block], original: Sequence[Block]) -> bool:
    return len(blocks) == len(original) and all(a is b for a, b in zip(blocks, original, strict=True))


def text_of(block: ToolResult, item: int | None) -> str:
    if item is None:
        assert isinstance(block.content, str)
        return block.content
    assert isinstance(block.content, tuple)
    text = block.content[item]
    assert isinstance(text, Text)
    return text.text


def with_text(block: ToolResult, item: int | None, text: str) -> ToolResult:
    if item is None:
        return attrs.evolve(block, content=text)
    assert isinstance(block.content, tuple)
    items = list(block.content)
    old = items[item]
    assert isinstance(old, Text)
    items[item] = attrs.evolve(old, text=text)
    return attrs.evolve(block, content=tuple(items))


def textual_chars(block: ToolResult) -> int:
    if isinstance(block.content, str):
        return len(block.content)
    if block.content is None:
        return 0
    return sum(len(i.text) for i in block.content if isinstance(i, Text))


def cut_text(text: str, keep: int) -> str:
    return text[:keep] + notice_text(len(text) - keep)


# ---------------------------------------------------------------- pairing as the API sees it


def leading_result_ids(message: Message) -> set[str]:
    ids: set[str] = set()
    for block in message.blocks:
        if not isinstance(block, ToolResult):
            break
        ids.add(block.tool_use_id)
    return ids


def pending_server_ids(message: Message) -> list[str]:
    calls: list[str] = []
    resolved: set[str] = set()
    for block in message.blocks:
        if isinstance(block, Opaque):
            key = "id" if block.type == "server_tool_use" else "tool_use_id"
            value = block.fields.get(key)
            if not isinstance(value, str):
                continue
            if block.type == "server_tool_use":
                calls.append(value)
            elif block.type.endswith("_tool_result") and block.type != "tool_result":
                resolved.add(value)
    return sorted(set(calls) - resolved)


def issues(prev: Message | None, message: Message, nxt: Message | None) -> list[Issue]:
    """Pairing violations owned by ``message`` between these neighbours (contract §3 rules 1, 4)."""
    out: list[Issue] = []
    if message.role == "assistant" and nxt is not None:
        calls = message.tool_uses
        if calls:
            leading = leading_result_ids(nxt) if nxt.role == "user" else set()
            out.extend(("missing", u.id) for u in calls if u.id not in leading)
        pending = pending_server_ids(message)
        if pending and nxt.role == "user":
            others = sum(1 for b in nxt.blocks if not isinstance(b, ToolResult))
            out.extend(("server-pending", i) for i in pending for _ in range(others))
    results = message.tool_results
    if results:
        ok = set(uses_of(prev)) if message.role == "user" else set()
        out.extend(("unexpected", r.tool_use_id) for r in results if r.tool_use_id not in ok)
    return out


def holds_results_of(assistant: Message, user: Message) -> bool:
    if assistant.role != "assistant" or user.role != "user":
        return False
    ids = set(uses_of(assistant))
    return bool(ids) and any(r.tool_use_id in ids for r in user.tool_results)


def declare(**changes: str) -> Mapping[str, str]:
    """The policies a variant declares in ``describe``: the reference's, with ``changes`` (contract §3, §4)."""
    return MappingProxyType(
        {"orphans": "drop", "trailing": "leave", "resultOrder": "tool_use", "recoverSuccess": "fits", **changes}
    )


class Agent:
    """The reference's behaviour behind the six ops; subclasses override one code path."""

    name = "outside-agent"
    policies = declare()
    tokenizer = "zoo"  # the alias the reference declares (see legit_tokenizer_name)

    def __init__(self) -> None:
        self.counter = get_counter("zoo")  # o200k_base with the field's fudge of 1.5 once per call

    def ops(self) -> tuple[Any, ...]:
        return tuple(getattr(self, op) for op in OPS)

    # ------------------------------------------------------------------ ops (dict -> dict)

    def describe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "protocol": 1,
            "name": self.name,
            "version": ctxmodel.__version__,
            "ops": list(OPS),
            "tokenizer": self.tokenizer,
            "policies": dict(self.policies),
        }

    def load(self, params: dict[str, Any]) -> History:
        if "messages" not in params:
            raise ValueError("params.messages: expected an array of messages, got nothing")
        return codec.load(params["messages"])

    def options(self, params: dict[str, Any]) -> dict[str, str]:
        policies = {**self.policies, **(params.get("policies") or {})}
        return {
            "orphans": "to_text" if policies.get("orphans") == "to_text" else "drop",
            "trailing": "close" if policies.get("trailing") == "close" else "leave",
        }

    def normalize(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"messages": codec.dump(self.normalize_stored(self.load(params), **self.options(params)))}

    def normalize_stored(self, history: Sequence[Message], orphans: str = "drop", trailing: str = "leave") -> History:
        """Contract §3 on a stored history: the rules between its visible messages; hidden ones kept,
        all of them just before the last summary (those it hides by position must stay before it;
        the others are hidden by their tags wherever they are)."""
        mask = self.visible(history)
        if all(mask):
            return self.normalize_history(history, orphans, trailing)
        done = list(self.normalize_history([m for m, v in zip(history, mask, strict=True) if v], orphans, trailing))
        hidden = [m for m, v in zip(history, mask, strict=True) if not v]
        at = max((i for i, m in enumerate(done) if m.is_summary), default=0)
        return (*done[:at], *hidden, *done[at:])

    def effective(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"messages": codec.dump(self.effective_history(self.load(params)))}

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        history = self.effective_history(self.load(params))
        return {"messages": codec.dump(self.normalize_history(history, **self.options(params)))}

    def count(self, params: dict[str, Any]) -> dict[str, Any]:
        system_prompt = params.get("systemPrompt", "")
        if not isinstance(system_prompt, str):
            raise ValueError("params.systemPrompt: expected a string")
        c = self.counter
        return {"tokens": c.count_text(system_prompt) + c.count_messages(self.load(params))}

    def recover(self, params: dict[str, Any]) -> dict[str, Any]:
        def integer(key: str, default: int | None = None) -> int:
            value = params.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"params.{key}: expected an integer, got {value!r}")
            return value

        system_prompt = params.get("systemPrompt", "")
        if not isinstance(system_prompt, str):
            raise ValueError("params.systemPrompt: expected a string")
        if params.get("totalTokens") is not None:
            integer("totalTokens")
        out = self.recover_history(self.load(params), integer("contextWindow"), integer("maxTokens", 0), system_prompt)
        out["messages"] = codec.dump(out["messages"])
        return out

    # ------------------------------------------------------------------ visibility (contract §2)

    def visible(self, history: Sequence[Message]) -> list[bool]:
        summaries = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        mask: list[bool] = []
        for i, m in enumerate(history):
            if i < start:
                mask.append(False)
            elif i == start:
                mask.append(True)
            else:
                hidden = m.condense_parent in summaries or m.truncation_parent in markers
                mask.append(not hidden)
        return mask

    def effective_history(self, history: Sequence[Message]) -> History:
        return tuple(m for m, keep in zip(history, self.visible(history), strict=True) if keep)

    # ------------------------------------------------------------------ pairing (contract §3)

    def synthetic(self, tool_use_id: str) -> ToolResult:
        return synthetic_result(tool_use_id)

    def dedupe_tool_uses(self, history: Sequence[Message]) -> list[tuple[int, Message]]:
        """Rule 5 first: a repeated ``tool_use`` id goes (with its results when in a later message)."""
        seen: set[str] = set()
        kill: set[str] = set()
        out: list[tuple[int, Message]] = []
        for index, message in enumerate(history):
            pending, kill = kill, set()
            content = message.content
            if isinstance(content, str):
                out.append((index, message))
                continue
            if message.role == "assistant":
                here: set[str] = set()
                kept: list[Block] = []
                for block in content:
                    if isinstance(block, ToolUse):
                        if block.id in seen:
                            kill.add(block.id)
                            continue
                        if block.id in here:
                            continue
                        here.add(block.id)
                    kept.append(block)
                seen |= here
            elif pending:
                kept = [b for b in content if not (isinstance(b, ToolResult) and b.tool_use_id in pending)]
            else:
                out.append((index, message))
                continue
            if same(kept, content):
                out.append((index, message))
            elif kept:
                out.append((index, message.with_content(tuple(kept))))
        return out

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        """One user message against the ``tool_use`` ids before it; ``valid``: ids its results may answer."""
        content = message.content
        if isinstance(content, str):
            if not uses:
                return message
            tail: tuple[Block, ...] = (Text(content),) if content else ()
            return message.with_content(tuple(self.synthetic(u) for u in uses) + tail)
        wanted = set(valid)
        kept: dict[str, ToolResult] = {}
        others: list[Block] = []
        for block in content:
            if isinstance(block, ToolResult):
                rid = block.tool_use_id
                if rid in wanted:
                    kept.setdefault(rid, block)  # the first valid result wins
                elif orphans == "to_text":
                    others.append(orphan_text(block))
                continue
            others.append(block)
        blocks = [kept[u] if u in kept else self.synthetic(u) for u in uses] + others
        if same(blocks, content):
            return message
        if not blocks:
            return None
        return message.with_content(tuple(blocks))

    def normalize_history(self, history: Sequence[Message], orphans: str = "drop", trailing: str = "leave") -> History:
        staged = self.dedupe_tool_uses(history)
        input_uses = {index: uses_of(m) for index, m in staged if m.role == "assistant"}
        out: list[Message] = []
        for index, message in staged:
            uses = uses_of(out[-1] if out else None)
            if message.role == "user":
                valid = [u for u in input_uses.get(index - 1, ()) if u in uses]
                paired = self.pair(message, uses, valid, orphans)
                if paired is not None:
                    out.append(paired)
                continue
            if uses:
                out.append(Message("user", tuple(self.synthetic(u) for u in uses)))
            out.append(message)
        if trailing == "close":
            uses = uses_of(out[-1] if out else None)
            if uses:
                out.append(Message("user", tuple(self.synthetic(u) for u in uses)))
        return tuple(out)

    # ------------------------------------------------------------------ recovery (contract §4)

    def fudged(self, raw: int) -> int:
        return self.counter.fudged(raw)

    def max_raw(self, budget: int) -> int:
        num, den = self.counter.fudge
        return -1 if budget < 0 else budget * den // num

    def raw_message(self, message: Message) -> int:
        return sum(self.counter.raw_block(b) for b in message.blocks)

    def marker_raw(self, k: int) -> int:
        return self.counter.raw_block(Text(marker_text(k)))

    def recount(self, history: Sequence[Message], system_prompt: str) -> int:
        """``count(systemPrompt) + count(effective history)``: two calls, each with the fudge once."""
        c = self.counter
        return c.count_text(system_prompt) + c.count_messages(self.effective_history(history))

    def cut_candidates(
        self, history: Sequence[Message], visible: list[int], raws: list[int], raw_total: int
    ) -> Iterator[Cut]:
        """Every cut hiding the oldest taggable visible messages that splits no tool pair and adds no
        pairing violation the input did not have (contract §4 rules 3, 4), fewest messages first."""
        n = len(visible)
        if n < 3:
            return
        msgs = [history[i] for i in visible]
        is_marker = [m.is_truncation_marker for m in msgs]
        pair = [j + 1 < n and holds_results_of(msgs[j], msgs[j + 1]) for j in range(n)]
        if pair[0] and not is_marker[1]:
            return
        owned: list[Multiset[Issue]] = []  # owned[j]: the input's issues owned by positions <= j
        acc: Multiset[Issue] = Multiset()
        for j in range(n):
            acc.update(issues(msgs[j - 1] if j else None, msgs[j], msgs[j + 1] if j + 1 < n else None))
            owned.append(acc.copy())
        marker_positions = [j for j in range(1, n) if is_marker[j]]
        straddles = {
            j: (pair[j - 1] and j > 1 and not is_marker[j - 1]) or (j + 1 < n and pair[j] and not is_marker[j + 1])
            for j in marker_positions
        }
        hidden_raw = 0
        k = 0
        for p in range(1, n - 1):
            if is_marker[p]:
                continue
            k += 1
            hidden_raw += raws[p]
            if pair[p]:
                continue
            span_markers = [j for j in marker_positions if j < p]
            if any(straddles[j] for j in span_markers):
                continue
            window = [msgs[0], *(msgs[j] for j in span_markers), Message("user", marker_text(k)), msgs[p + 1]]
            tail = msgs[p + 2] if p + 2 < n else None
            local: Multiset[Issue] = Multiset()
            for w, message in enumerate(window):
                prev = window[w - 1] if w else None
                nxt = window[w + 1] if w + 1 < len(window) else tail
                local.update(issues(prev, message, nxt))
            if any(count > owned[p + 1][issue] for issue, count in local.items()):
                continue
            hidden = tuple(visible[j] for j in range(1, p + 1) if not is_marker[j])
            yield Cut(hidden, visible[p + 1], raw_total - hidden_raw + self.marker_raw(k), k)

    def choose_cut(
        self, history: Sequence[Message], visible: list[int], raws: list[int], raw_total: int, raw_budget: int
    ) -> Cut | None:
        """The fewest messages that fit, else the cut that lowers the count most, else none."""
        best: Cut | None = None
        for cut in self.cut_candidates(history, visible, raws, raw_total):
            if cut.raw_after <= raw_budget:
                return cut
            if best is None or self.fudged(cut.raw_after) < self.fudged(best.raw_after):
                best = cut
        if best is None or self.fudged(best.raw_after) >= self.fudged(raw_total):
            return None
        return best

    def apply_cut(self, history: Sequence[Message], cut: Cut, truncation_id: str) -> History:
        hidden = set(cut.hidden)
        out: list[Message] = []
        for i, message in enumerate(history):
            if i == cut.first_kept:
                meta: dict[str, Any] = {}
                if message.ts is not None:
                    meta["ts"] = message.ts - 1
                meta["isTruncationMarker"] = True
                meta["truncationId"] = truncation_id
                out.append(Message("user", marker_text(len(hidden)), meta))
            out.append(message.with_meta(truncationParent=truncation_id) if i in hidden else message)
        return tuple(out)

    def new_id(self, history: Sequence[Message]) -> str | None:
        keys = ("truncationId", "truncationParent", "condenseId", "condenseParent")
        in_use = {v for m in history for k in keys if isinstance(v := m.meta.get(k), str)}
        for _ in range(10):
            candidate = uuid.uuid4().hex
            if candidate not in in_use:
                return candidate
        return None

    def candidates(self, history: Sequence[Message], mask: list[bool]) -> list[Unit]:
        """Visible textual tool-result texts, largest first (ties: earliest)."""
        units: list[Unit] = []
        for i, message in enumerate(history):
            if not mask[i] or isinstance(message.content, str):
                continue
            for b, block in enumerate(message.content):
                if not isinstance(block, ToolResult):
                    continue
                if isinstance(block.content, str):
                    units.append(Unit(i, b, None, len(block.content)))
                elif block.content is not None:
                    for k, item in enumerate(block.content):
                        if isinstance(item, Text):
                            units.append(Unit(i, b, k, len(item.text)))
        units.sort(key=lambda u: (-u.chars, u.message, u.block, -1 if u.item is None else u.item))
        return units

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        """One text cut to a prefix (>= the floor) plus the notice, strictly smaller in characters and
        tokens, sized to free ``raw_to_free`` raw tokens; None when no such cut exists."""
        c = self.counter
        text = text_of(block, item)
        old_raw = c.raw_block(block)
        if old_raw <= 0 or len(text) <= FLOOR_CHARS:
            return None
        chars_per_token = max(textual_chars(block), 1) / old_raw
        notice_raw = c.raw_text(notice_text(len(text)))
        keep_tokens = len(text) / chars_per_token - raw_to_free - notice_raw - BOUNDARY_SLACK
        keep = max(FLOOR_CHARS, math.floor(keep_tokens * chars_per_token))
        best: tuple[ToolResult, int] | None = None
        for _ in range(MAX_CUT_ATTEMPTS):
            new_text = cut_text(text, keep)
            if len(new_text) >= len(text):
                shorter = max(FLOOR_CHARS, keep - (len(new_text) - len(text)) - 1)
                if shorter >= keep:
                    return best
                keep = shorter
                continue
            new_block = with_text(block, item, new_text)
            new_raw = c.raw_block(new_block)
            if item is not None and new_raw < old_raw and c.raw_block(Text(new_text)) >= c.raw_block(Text(text)):
                new_raw = old_raw  # a text item must shrink in tokens too
            if new_raw < old_raw:
                best = (new_block, new_raw)
            freed = old_raw - new_raw
            if freed >= raw_to_free or keep <= FLOOR_CHARS:
                return best
            prefix_cpt = len(new_text) / max(new_raw, 1)
            smaller = max(FLOOR_CHARS, keep - math.ceil((raw_to_free - freed + BOUNDARY_SLACK) * prefix_cpt))
            if smaller >= keep:
                return best
            keep = smaller
        return best

    def shrink_mask(self, source: History, work: History) -> list[bool]:
        """Which messages of the truncated history degradation may touch: the visible ones."""
        return self.visible(work)

    def raw_effective(self, history: Sequence[Message]) -> int:
        return sum(self.raw_message(m) for m in self.effective_history(history))

    def degrade(
        self, work: History, mask: list[bool], system_prompt: str, allowed: int, raw_now: int, raw_budget: int, new: int
    ) -> tuple[History, int, int]:
        """The degradation loop: largest visible text first, each cut sized to the deficit the recount
        shows, recounting after every cut (the counter caches per block) until the request fits.

        Returns (history, how many texts were cut, the recount)."""
        edited = list(work)
        done = 0
        for unit in self.candidates(work, mask):
            if new <= allowed:
                break
            message = edited[unit.message]
            assert not isinstance(message.content, str)
            block = message.content[unit.block]
            assert isinstance(block, ToolResult)
            shrunk = self.shrink(block, unit.item, max(self.raw_effective(edited) - raw_budget, 1))
            if shrunk is None:
                continue
            blocks = list(message.content)
            blocks[unit.block] = shrunk[0]
            edited[unit.message] = message.with_content(tuple(blocks))
            done += 1
            new = self.recount(edited, system_prompt)
        return tuple(edited), done, new

    def failed(self, source: History, prev: int, reason: str) -> dict[str, Any]:
        return {
            "messages": source,
            "error": f"{FAILED_PREFIX}: {reason}",
            "messagesRemoved": 0,
            "prevContextTokens": prev,
            "newContextTokens": prev,
            "truncationId": None,
        }

    def succeeded(self, work: History, prev: int, new: int, removed: int, tid: str | None) -> dict[str, Any]:
        return {
            "messages": work,
            "error": None,
            "messagesRemoved": removed,
            "prevContextTokens": prev,
            "newContextTokens": new,
            "truncationId": tid,
        }

    def decide(
        self,
        source: History,
        work: History,
        prev: int,
        new: int,
        allowed: int,
        removed: int,
        degraded: int,
        tid: str | None,
    ) -> dict[str, Any]:
        """The success decision: success only within budget (``recoverSuccess=fits``)."""
        if new > allowed:
            if removed == 0 and not degraded:
                return self.failed(source, prev, "removed 0 messages and no eligible text tool result could be shrunk")
            return self.failed(source, prev, f"hiding {removed} and shrinking {degraded} leaves {new} > {allowed}")
        return self.succeeded(work, prev, new, removed, tid)

    def recover_history(
        self, history: History, context_window: int, max_tokens: int, system_prompt: str
    ) -> dict[str, Any]:
        source = tuple(history)
        allowed = allowed_tokens(context_window, max_tokens)
        system_tokens = self.counter.count_text(system_prompt)
        prev = self.recount(source, system_prompt)
        if allowed <= 0:
            return self.failed(source, prev, f"no room for context: allowed = {allowed} tokens")
        if prev <= allowed:
            return self.succeeded(source, prev, prev, 0, None)
        if system_tokens > allowed:
            return self.failed(source, prev, "the system prompt alone is over the budget")
        mask = self.visible(source)
        visible = [i for i, keep in enumerate(mask) if keep]
        raws = [self.raw_message(source[i]) for i in visible]
        raw_total = sum(raws)
        raw_budget = self.max_raw(allowed - system_tokens)

        work, tid, removed, raw_now = source, None, 0, raw_total
        cut = self.choose_cut(source, visible, raws, raw_total, raw_budget)
        if cut is not None:
            tid = self.new_id(source)
            if tid is None:
                return self.failed(source, prev, "the id factory kept returning ids already in use")
            work = self.apply_cut(source, cut, tid)
            removed = len(cut.hidden)
            raw_now = cut.raw_after
        new = self.recount(work, system_prompt)
        degraded = 0
        if new > allowed:
            mask = self.shrink_mask(source, work)
            work, degraded, new = self.degrade(work, mask, system_prompt, allowed, raw_now, raw_budget, new)
        return self.decide(source, work, prev, new, allowed, removed, degraded, tid)
