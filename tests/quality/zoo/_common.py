"""Shared parts of the bug zoo: JSON helpers, an independent normalizer with hooks, field-style truncation.

Every zoo variant is one realistic mistake. To keep that mistake the *only* difference from a correct
implementation, the variants are built from parts that are themselves correct:

- ``FieldNormalizer``: an independent JSON-level implementation of contract §3, written from the
  contract (not by calling ``ctxmodel.normalize``), with one hook per decision. A pairing bug overrides
  exactly one hook, the way the field's bugs live in one helper (domain §4.1-§4.3).
- ``reference_*``: the reference ops, for variants whose mistake is elsewhere.
- ``roo_truncate``: Roo-Code's ``truncateConversation`` (domain §3.3), which several recovery bugs
  start from.
- ``recover_with_allowed``: the reference's recovery aimed at another budget, for the budget-arithmetic
  mistakes of domain §3.1 (a wrong ``allowed`` and otherwise correct code).

Everything here is pure: inputs are copied before anything is built from them (contract §1).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxmodel import codec
from ctxmodel.targets import reference

__all__ = [
    "SYNTHETIC_TEXT",
    "FieldNormalizer",
    "allowed_for",
    "blocks",
    "controlled_error",
    "describe_as",
    "is_result",
    "is_use",
    "recount",
    "recover_with_allowed",
    "reference_count",
    "reference_effective",
    "reference_normalize",
    "reference_recover",
    "reference_request",
    "roo_truncate",
    "use_ids",
    "visible_flags",
]

Msg = dict[str, Any]
Block = dict[str, Any]
Params = dict[str, Any]

SYNTHETIC_TEXT = "Tool execution was interrupted before completion."
FAILED = "Context window recovery failed"


def describe_as(name: str, ops: Iterable[str], **policies: str) -> Callable[[Params], Params]:
    """A ``describe`` op (contract §7) naming the variant, its ops and its declared policies."""
    reply = {
        "protocol": 1,
        "name": name,
        "version": "zoo-1",
        "ops": sorted(set(ops)),
        "tokenizer": "zoo",
        "policies": dict(policies),
    }

    def describe(params: Params) -> Params:
        copied: Params = json.loads(json.dumps(reply))
        return copied

    return describe


# -- JSON helpers ------------------------------------------------------------------------------


def blocks(msg: Mapping[str, Any]) -> list[Block]:
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def is_use(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_use"


def is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def use_ids(msg: Mapping[str, Any] | None) -> list[str]:
    if msg is None or msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
        return []
    return [b["id"] for b in msg["content"] if is_use(b)]


def visible_flags(messages: list[Msg]) -> list[bool]:
    """The reference visibility predicate (contract §2), for variants whose bug is elsewhere."""
    from ctxmodel.visibility import visible_mask

    return visible_mask(codec.load(messages))


def recount(messages: list[Msg], system_prompt: str = "") -> int:
    """Contract §4's count: system prompt plus effective history, each fudged once."""
    from ctxmodel.tokens import request_tokens

    return int(request_tokens(codec.load(messages), system_prompt))


# -- the reference ops -------------------------------------------------------------------------


def reference_normalize(params: Params) -> Params:
    return reference.op_normalize(codec.copy_json(params))


def reference_effective(params: Params) -> Params:
    return reference.op_effective(codec.copy_json(params))


def reference_request(params: Params) -> Params:
    return reference.op_request(codec.copy_json(params))


def reference_recover(params: Params) -> Params:
    return reference.op_recover(codec.copy_json(params))


def reference_count(params: Params) -> Params:
    return reference.op_count(codec.copy_json(params))


# -- budgets -----------------------------------------------------------------------------------


def allowed_for(params: Mapping[str, Any]) -> int:
    """Contract §4's budget: ``floor(0.9 W) - reserve``, reserve 8192 when ``maxTokens <= 0``."""
    window = int(params["contextWindow"])
    max_tokens = int(params.get("maxTokens", 0))
    reserve = max_tokens if max_tokens > 0 else 8192
    return (9 * window) // 10 - reserve


def controlled_error(params: Mapping[str, Any], reason: str) -> Params:
    """Contract §4 rule 8's shape: the input unchanged, nothing removed, the count unchanged."""
    messages = codec.copy_json(params["messages"])
    prev = recount(messages, params.get("systemPrompt", ""))
    return {
        "messages": messages,
        "error": f"{FAILED}: {reason}",
        "messagesRemoved": 0,
        "prevContextTokens": prev,
        "newContextTokens": prev,
        "truncationId": None,
    }


def recover_with_allowed(params: Params, allowed: int) -> Params:
    """The reference's recovery, aimed at ``allowed`` instead of contract §4's budget.

    The budget-arithmetic mistakes of domain §3.1 sit in one line of otherwise correct code; this
    reproduces exactly that: a window and reserve whose contract budget is the mistaken one.
    ``floor(9W/10)`` takes every integer value, so such a window always exists.
    """
    if allowed <= 0:
        return controlled_error(params, f"allowed = {allowed}")
    target = allowed + 1  # reserve 1 (maxTokens = 1)
    window = max(1, (10 * target) // 9 - 1)
    while (9 * window) // 10 < target:
        window += 1
    shifted = dict(params, contextWindow=window, maxTokens=1)
    out = reference_recover(shifted)
    out["allowed"] = allowed
    return out


# -- Roo-Code's truncateConversation (domain §3.3) ---------------------------------------------


def roo_truncate(
    messages: list[Msg], frac: float = 0.5, visible: list[bool] | None = None
) -> tuple[list[Msg], int, str]:
    """Tag visible positions ``1..n`` (``n`` the even-rounded fraction), one marker before the first kept.

    Visible positions are, as in the field, messages without ``truncationParent`` that are not
    markers, unless ``visible`` gives another predicate. Returns (messages, removed, truncationId);
    with nothing to remove it returns a copy of the input, 0 and a fresh id, as the field does.
    """
    msgs = codec.copy_json(messages)
    if visible is None:
        visible = [not m.get("truncationParent") and not m.get("isTruncationMarker") for m in msgs]
    positions = [i for i, keep in enumerate(visible) if keep]
    raw = int((len(positions) - 1) * frac) if positions else 0
    n = raw - raw % 2
    tid = uuid.uuid4().hex
    if n <= 0:
        return msgs, 0, tid
    hidden = positions[1 : n + 1]
    for i in hidden:
        msgs[i] = dict(msgs[i], truncationParent=tid)
    first_kept = positions[n + 1] if n + 1 < len(positions) else len(msgs)
    marker: Msg = {
        "role": "user",
        "content": f"[Sliding window truncation: {n} messages hidden to reduce context]",
        "isTruncationMarker": True,
        "truncationId": tid,
    }
    if first_kept < len(msgs) and isinstance(msgs[first_kept].get("ts"), int | float):
        marker["ts"] = msgs[first_kept]["ts"] - 1
    msgs.insert(first_kept, marker)
    return msgs, n, tid


# -- an independent normalizer with one hook per decision (contract §3) ----------------------


#: A key a visible message carries through ``normalize`` so the hidden ones can be put back around it.
_ORIGIN = "__ctxmodel_origin"


class FieldNormalizer:
    """Contract §3 at the JSON level, written from the contract; each decision is a method.

    Correct as it stands (it is also a legitimate variant: ``legit_independent``); a pairing bug is
    a subclass overriding one method. Results are judged valid against the message right before
    them *in the input* (rules 2 and 4), after rule 5 (duplicate ``tool_use`` ids) ran first.
    """

    orphans = "drop"
    trailing = "leave"

    def __call__(self, params: Params) -> Params:
        messages = codec.copy_json(params["messages"])
        return {"messages": self.stored(messages)}

    def stored(self, messages: list[Msg]) -> list[Msg]:
        """Contract §3, judged on what is sent: the rules apply to the visible messages, adjacency
        between visible messages; each hidden message goes back before the visible one it preceded."""
        mask = visible_flags(messages)
        if all(mask):
            return self.normalize(messages)
        visible: list[Msg] = []
        before: dict[int, list[Msg]] = {}
        run: list[Msg] = []
        for i, (msg, shown) in enumerate(zip(messages, mask, strict=True)):
            if not shown:
                run.append(msg)
                continue
            before[i], run = run, []
            visible.append({**msg, _ORIGIN: i})
        out: list[Msg] = []
        pending = sorted(before)
        for msg in self.normalize(visible):
            origin = msg.pop(_ORIGIN, None)
            while pending and origin is not None and pending[0] <= origin:
                out.extend(before[pending.pop(0)])
            out.append(msg)
        for i in pending:
            out.extend(before[i])
        return out + run

    # rule 5 --------------------------------------------------------------------------------

    def dedupe_tool_uses(self, messages: list[Msg]) -> list[tuple[int, Msg]]:
        seen: set[str] = set()
        kill: set[str] = set()
        out: list[tuple[int, Msg]] = []
        for index, msg in enumerate(messages):
            pending, kill = kill, set()
            content = msg.get("content")
            if not isinstance(content, list):
                out.append((index, msg))
                continue
            if msg.get("role") == "assistant":
                here: set[str] = set()
                kept: list[Block] = []
                for block in content:
                    if is_use(block):
                        if block["id"] in seen:
                            kill.add(block["id"])
                            continue
                        if block["id"] in here:
                            continue
                        here.add(block["id"])
                    kept.append(block)
                seen |= here
            elif pending:
                kept = [b for b in content if not (is_result(b) and b.get("tool_use_id") in pending)]
            else:
                out.append((index, msg))
                continue
            if len(kept) == len(content):
                out.append((index, msg))
            elif kept:
                out.append((index, self.rebuild(msg, kept)))
        return out

    # the hooks -------------------------------------------------------------------------------

    def synthetic(self, tool_id: str) -> Block:
        """Rule 3: non-empty and marked."""
        return {"type": "tool_result", "tool_use_id": tool_id, "content": SYNTHETIC_TEXT, "is_error": True}

    def is_valid(self, result_id: str, valid: list[str], seen: list[str]) -> bool:
        """Rules 2 and 4: valid only for a ``tool_use`` of the message right before (``valid``).

        ``seen`` holds every ``tool_use`` id met so far, for variants that look further back.
        """
        return result_id in valid

    def keep_result(self, block: Block) -> Block:
        """Rule 2: a kept result keeps its content and ``is_error``."""
        return block

    def orphan(self, block: Block, uses: list[str], taken: set[str]) -> Block | None:
        """Rule 4 under the declared policy: drop, or a text block holding the content."""
        if self.orphans != "to_text":
            return None
        content = block.get("content")
        if isinstance(content, list):
            body = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
        else:
            body = content if isinstance(content, str) else ""
        return {"type": "text", "text": "Tool result:\n" + body}

    def prefer(self, first: Block, later: Block) -> Block:
        """Rule 2: of duplicate valid results one is kept; the first, here."""
        return first

    def order_results(self, uses: list[str], kept: dict[str, Block]) -> list[Block]:
        """Rules 1 and 3: one result per call, in ``tool_use`` order, synthetic where missing."""
        return [kept[u] if u in kept else self.synthetic(u) for u in uses]

    def keep_other(self, block: Block) -> bool:
        """Rule 6: every non-result block is kept."""
        return True

    def arrange(self, head: list[Block], others: list[Block]) -> list[Block]:
        """Rule 1: the results first, then the other blocks in their order."""
        return head + others

    def string_with_results(self, text: str, head: list[Block]) -> list[Block]:
        """Rule 6: string content becomes a text block after the added results."""
        return head + ([{"type": "text", "text": text}] if text else [])

    def rebuild(self, msg: Msg, content: list[Block]) -> Msg:
        """Rule 6: metadata keys are kept."""
        return dict(msg, content=content)

    def assistant(self, msg: Msg) -> Msg:
        """Rule 6: assistant content (thinking first) passes unchanged."""
        return msg

    def dedupe_results(self) -> bool:
        """Rule 2: one result per id (the first valid one)."""
        return True

    def drop_emptied(self) -> bool:
        """Rule 6: a message normalization empties is removed."""
        return True

    # the pass --------------------------------------------------------------------------------

    def pair(self, msg: Msg, uses: list[str], valid: list[str], seen: list[str]) -> Msg | None:
        content = msg.get("content")
        if isinstance(content, str):
            if not uses:
                return msg
            return self.rebuild(msg, self.string_with_results(content, [self.synthetic(u) for u in uses]))
        if not isinstance(content, list):
            return msg
        kept: dict[str, Block] = {}
        extra: list[Block] = []
        others: list[Block] = []
        for block in content:
            if is_result(block):
                rid = block.get("tool_use_id")
                if isinstance(rid, str) and self.is_valid(rid, valid, seen):
                    if rid not in uses:
                        others.append(block)  # "valid" elsewhere: left where it is
                    elif rid not in kept:
                        kept[rid] = self.keep_result(block)
                    elif not self.dedupe_results():
                        extra.append(self.keep_result(block))
                    else:
                        kept[rid] = self.prefer(kept[rid], self.keep_result(block))
                    continue
                converted = self.orphan(block, uses, set(kept))
                if converted is not None:
                    if is_result(converted):
                        kept.setdefault(converted["tool_use_id"], converted)
                    else:
                        others.append(converted)
                continue
            if self.keep_other(block):
                others.append(block)
        head = self.order_results(uses, kept) + extra
        new = self.arrange(head, others)
        if new == content:
            return msg
        if not new and self.drop_emptied():
            return None
        return self.rebuild(msg, new)

    def normalize(self, messages: list[Msg]) -> list[Msg]:
        staged = self.dedupe_tool_uses(messages)
        input_uses = {index: use_ids(msg) for index, msg in staged if msg.get("role") == "assistant"}
        seen: list[str] = []
        out: list[Msg] = []
        for index, msg in staged:
            uses = use_ids(out[-1] if out else None)
            if msg.get("role") == "user":
                valid = [u for u in input_uses.get(index - 1, []) if u in uses]
                paired = self.pair(msg, uses, valid, seen)
                if paired is not None:
                    out.append(paired)
                continue
            if uses:
                out.append({"role": "user", "content": [self.synthetic(u) for u in uses]})
            msg = self.assistant(msg) if msg.get("role") == "assistant" else msg
            seen.extend(use_ids(msg))
            out.append(msg)
        if self.trailing == "close":
            uses = use_ids(out[-1] if out else None)
            if uses:
                out.append({"role": "user", "content": [self.synthetic(u) for u in uses]})
        return out
