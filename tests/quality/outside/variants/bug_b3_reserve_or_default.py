"""The reserve is ported from Roo-Code as ``maxTokens || 8192``: a negative ``maxTokens`` (-1, "unset" in
some provider settings) is taken as a reserve of -1 instead of 8192, so the budget grows past the window
and a history over the real budget is returned unchanged as a success (or an ``allowed <= 0`` case is
not refused).

Breaks: contract §4 (Budget: ``reserve = maxTokens if maxTokens > 0 else 8192``), hence rule 1 (allowed
<= 0 is a controlled error) and rule 7 (a success is within budget).
Code path: the budget, at the top of recovery (``recover_history``).
"""

from typing import Any

from ctxmodel.model import History
from ctxmodel.recover import DEFAULT_RESERVE

from ._kit import Agent


class V(Agent):
    name = "bug-b3-reserve-or-default"

    def recover_history(
        self, history: History, context_window: int, max_tokens: int, system_prompt: str
    ) -> dict[str, Any]:
        source = tuple(history)
        allowed = (9 * context_window) // 10 - (max_tokens or DEFAULT_RESERVE)
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


describe, normalize, effective, request, recover, count = V().ops()
