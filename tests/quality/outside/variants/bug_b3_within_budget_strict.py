"""The "nothing to do" test reads ``prev < allowed``: a history whose count is exactly the budget is
taken as over it and gets truncated (or, with nothing to hide or shrink, refused with an error).

Breaks: contract §4 rule 2 (a count equal to ``allowed`` is within budget: unchanged, no error).
Code path: the within-budget test at the top of recovery (``recover_history``).
"""

from typing import Any

from ctxmodel.model import History

from ._kit import Agent, allowed_tokens


class V(Agent):
    name = "bug-b3-within-budget-strict"

    def recover_history(
        self, history: History, context_window: int, max_tokens: int, system_prompt: str
    ) -> dict[str, Any]:
        source = tuple(history)
        allowed = allowed_tokens(context_window, max_tokens)
        system_tokens = self.counter.count_text(system_prompt)
        prev = self.recount(source, system_prompt)
        if allowed <= 0:
            return self.failed(source, prev, f"no room for context: allowed = {allowed} tokens")
        if prev < allowed:
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
