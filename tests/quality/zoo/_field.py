"""A field-style recovery with one method per decision, for the recovery bugs of the families table.

``FieldRecovery`` is contract §4 written the way an agent's developer writes it (domain §3.3, §3.7):
hide the fewest oldest visible messages that fit (else the cut that lowers the count most), never
ending the cut between an assistant ``tool_use`` and the next visible message holding its results;
then cut the largest visible textual tool results to a prefix of at least 200 characters plus the
notice, the notice's length reserved and each cut kept only when the block shrinks in tokens; then
succeed only within budget (``recoverSuccess=fits``) or, declared ``converges``, when something was
hidden or shrunk. Every budget figure is a recount (``_common.recount``).

Correct as it stands; a bug variant is a subclass overriding one method (as the pairing bugs do
with ``_common.FieldNormalizer``), so it differs from a correct implementation by that method only.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from ctxmodel import codec
from tests.quality.zoo._common import allowed_for, controlled_error, recount, visible_flags
from tests.quality.zoo._degrade import FLOOR, _block_tokens, _get, _put, _texts, notice

Msg = dict[str, Any]
Params = dict[str, Any]

__all__ = ["FieldRecovery", "Incomplete", "notice_tokens"]


class Incomplete(Exception):
    """Recovery could not bring the history within budget (or made no progress)."""

    def __init__(self, reason: str, messages: list[Msg], new: int, removed: int, tid: str | None) -> None:
        super().__init__(reason)
        self.messages, self.new, self.removed, self.tid = messages, new, removed, tid


def notice_tokens(removed: int) -> int:
    from ctxmodel.tokens import get_counter

    return int(get_counter("zoo").count_text(notice(removed)))


def _result(messages: list[Msg], prev: int, new: int, removed: int, tid: str | None) -> Params:
    return {"messages": messages, "error": None, "messagesRemoved": removed, "prevContextTokens": prev,
            "newContextTokens": new, "truncationId": tid if removed else None}


class FieldRecovery:
    """Contract §4 with one method per decision (see the module docstring)."""

    recover_success = "fits"

    def __call__(self, params: Params) -> Params:
        params = codec.copy_json(params)
        allowed = allowed_for(params)
        if allowed <= 0:
            return controlled_error(params, f"allowed = {allowed} tokens")
        msgs: list[Msg] = params["messages"]
        system = params.get("systemPrompt", "")
        prev = self.count(msgs, system)
        if self.within_budget(params, prev, allowed):
            return _result(msgs, prev, prev, 0, None)
        target = self.aim(prev, allowed)
        try:
            out, removed, tid = self.truncate(msgs, system, target)
            shrunk = 0
            if self.count(out, system) > target:
                out, shrunk = self.degrade(out, system, target, tid)
            new = self.count(out, system)
            self.decide(out, prev, new, allowed, removed, shrunk, tid)
        except Incomplete as failure:
            return self.on_failure(params, failure, prev)
        return _result(out, prev, new, removed, tid)

    # -- budget ------------------------------------------------------------------------------------

    def count(self, msgs: list[Msg], system: str) -> int:
        """Contract §4's count: the system prompt plus the effective history."""
        return recount(msgs, system)

    def within_budget(self, params: Params, prev: int, allowed: int) -> bool:
        """Rule 2: a count equal to ``allowed`` is within."""
        return prev <= allowed

    def aim(self, prev: int, allowed: int) -> int:
        """What truncation and degradation aim at: the budget itself."""
        return allowed

    # -- truncation ----------------------------------------------------------------------------------

    def positions(self, msgs: list[Msg]) -> list[bool]:
        """The messages the cut counts as visible: the one predicate of contract §2."""
        return visible_flags(msgs)

    def holds_results(self, msgs: list[Msg], vis: list[int], p: int) -> bool:
        """Whether visible position ``p`` is an assistant ``tool_use`` whose results the next visible holds."""
        if p + 1 >= len(vis):
            return False
        here, nxt = msgs[vis[p]], msgs[vis[p + 1]]
        if here.get("role") != "assistant" or not isinstance(here.get("content"), list):
            return False
        ids = {b.get("id") for b in here["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        if not ids or nxt.get("role") != "user" or not isinstance(nxt.get("content"), list):
            return False
        return any(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids
                   for b in nxt["content"])

    def may_end_cut(self, msgs: list[Msg], vis: list[int], p: int) -> bool:
        """The cut may end at visible position ``p``: it does not separate a call from its results."""
        return not self.holds_results(msgs, vis, p)

    def apply_cut(self, msgs: list[Msg], hidden: list[int], first_kept: int, tid: str) -> list[Msg]:
        """Tag the hidden messages (clones) and put one marker right before the first kept."""
        out = list(msgs)
        for i in hidden:
            out[i] = dict(out[i], truncationParent=tid)
        marker: Msg = {"role": "user",
                       "content": f"[Sliding window truncation: {len(hidden)} messages hidden to reduce context]",
                       "isTruncationMarker": True, "truncationId": tid}
        ts = msgs[first_kept].get("ts")
        if isinstance(ts, int | float) and not isinstance(ts, bool):
            marker["ts"] = ts - 1
        out.insert(first_kept, marker)
        return out

    def truncate(self, msgs: list[Msg], system: str, target: int) -> tuple[list[Msg], int, str | None]:
        """Hide visible positions ``1..p`` (markers of earlier cuts stay), the smallest ``p`` that fits."""
        mask = self.positions(msgs)
        vis = [i for i, shown in enumerate(mask) if shown]
        if len(vis) < 3 or self.holds_results(msgs, vis, 0):
            return msgs, 0, None
        limit = len(vis) - 2  # never the last visible message
        if self.holds_results(msgs, vis, limit):
            limit -= 1  # nor the call whose results it holds
        prev = self.count(msgs, system)
        tid = uuid.uuid4().hex
        best: tuple[int, list[Msg], int] | None = None
        for p in range(1, limit + 1):
            if not self.may_end_cut(msgs, vis, p):
                continue
            hidden = [vis[j] for j in range(1, p + 1) if not msgs[vis[j]].get("isTruncationMarker")]
            if not hidden:
                continue
            out = self.apply_cut(msgs, hidden, vis[p + 1], tid)
            now = self.count(out, system)
            if now <= target:
                return out, len(hidden), tid
            if now < prev and (best is None or now < best[0]):
                best = (now, out, len(hidden))
        if best is None:
            return msgs, 0, None
        return best[1], best[2], tid

    # -- degradation ---------------------------------------------------------------------------------

    def shrink_mask(self, msgs: list[Msg], tid: str | None) -> list[bool]:
        """Which messages' tool results may be cut: the visible ones (the one predicate)."""
        return visible_flags(msgs)

    def units(self, msgs: list[Msg], mask: list[bool]) -> list[tuple[int, int, int | None]]:
        """(message, block, item) of every textual tool-result text in ``mask``, largest first."""
        units = _texts(msgs, mask)
        units.sort(key=lambda u: -len(_get(msgs[u[0]]["content"][u[1]], u[2])))
        return units

    def eligible(self, text: str) -> bool:
        """Room for the floor and the notice."""
        return len(text) > FLOOR + len(notice(len(text)))

    def room(self, text: str) -> int:
        """The longest prefix that, with its notice, is still shorter than ``text``."""
        return len(text) - len(notice(len(text))) - 1

    def shrinks(self, block: Msg, new_block: Msg, item: int | None, keep: int) -> bool:
        """The cut block counts strictly fewer tokens (the characters are reserved by ``room``)."""
        return _block_tokens(new_block) < _block_tokens(block)

    def cut(self, block: Msg, item: int | None, remaining: int) -> Msg | None:
        """One text cut to a prefix plus notice, sized to free ``remaining`` tokens; None if it cannot shrink."""
        text = _get(block, item)
        if not self.eligible(text):
            return None
        tokens = _block_tokens(block)
        per_token = len(text) / max(tokens, 1)
        keep_tokens = max(tokens - remaining - notice_tokens(len(text)), 1)
        keep = max(FLOOR, min(math.floor(keep_tokens * per_token), self.room(text)))
        best: Msg | None = None
        for _ in range(4):  # re-estimated on what the last cut freed, until it frees enough or hits the floor
            new_block = _put(block, item, text[:keep] + notice(len(text) - keep))
            if self.shrinks(block, new_block, item, keep):
                best = new_block
            freed = tokens - _block_tokens(new_block)
            if freed >= remaining or keep <= FLOOR:
                break
            keep = max(FLOOR, keep - math.ceil((remaining - freed + 2) * per_token))
        return best

    def degrade(self, msgs: list[Msg], system: str, target: int, tid: str | None) -> tuple[list[Msg], int]:
        """Cut the largest candidates first until the recount reaches ``target``."""
        msgs = list(msgs)
        shrunk = 0
        for i, b, item in self.units(msgs, self.shrink_mask(msgs, tid)):
            remaining = self.count(msgs, system) - target
            if remaining <= 0:
                break
            new_block = self.cut(msgs[i]["content"][b], item, remaining)
            if new_block is None:
                continue
            content = list(msgs[i]["content"])
            content[b] = new_block
            msgs[i] = dict(msgs[i], content=content)
            shrunk += 1
        return msgs, shrunk

    # -- outcome -------------------------------------------------------------------------------------

    def decide(self, out: list[Msg], prev: int, new: int, allowed: int, removed: int, shrunk: int,
               tid: str | None) -> None:
        """Rules 6 and 7: within budget (``fits``), or progress made (``converges``); else Incomplete."""
        if self.recover_success == "converges":
            if removed == 0 and shrunk == 0:
                raise Incomplete(f"removed 0 messages and shrank nothing; {new} > {allowed}", out, new, removed, tid)
            return
        if new > allowed:
            reason = f"hiding {removed} and shrinking {shrunk} leaves {new} > {allowed}"
            raise Incomplete(reason, out, new, removed, tid)

    def on_failure(self, params: Params, failure: Incomplete, prev: int) -> Params:
        """Rule 8: a controlled error, the input unchanged."""
        return controlled_error(params, str(failure))
