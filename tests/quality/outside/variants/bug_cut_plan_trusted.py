"""Any cut the planner returns is taken as fitting, but when no cut reaches the budget the planner returns the one
that lowers the count most, so success is reported over budget and degradation never runs.

Breaks: contract §4 rule 7 (fits).
Code path: the cut choice as its caller reads it (``recover_history`` after ``choose_cut``).
"""

from typing import Any

from ctxmodel.model import History
from ctxmodel.recover import allowed_tokens

from ._kit import Agent


class V(Agent):
    name = "bug-cut-plan-trusted"

    def recover_history(
        self, history: History, context_window: int, max_tokens: int, system_prompt: str
    ) -> dict[str, Any]:
        source = tuple(history)
        visible = [i for i, keep in enumerate(self.visible(source)) if keep]
        raws = [self.raw_message(source[i]) for i in visible]
        raw_total = sum(raws)
        prev = self.recount(source, system_prompt)
        allowed = allowed_tokens(context_window, max_tokens)
        budget = self.max_raw(allowed - self.counter.count_text(system_prompt))
        if allowed > 0 and prev > allowed and budget >= 0:
            cut = self.choose_cut(source, visible, raws, raw_total, budget)
            tid = self.new_id(source)
            if cut is not None and tid is not None:
                work = self.apply_cut(source, cut, tid)  # the planner found a cut: it fits
                return self.succeeded(work, prev, self.recount(work, system_prompt), len(cut.hidden), tid)
        return super().recover_history(history, context_window, max_tokens, system_prompt)


describe, normalize, effective, request, recover, count = V().ops()
