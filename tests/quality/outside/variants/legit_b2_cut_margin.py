"""Legitimate: the truncation hides the fewest oldest messages that leave a 10% margin under the budget
(so the next turn does not trigger recovery again), hence sometimes more than the fewest that fit.

Mistake: none. Contract §4 reference choices: how much a target hides is its own choice; the cut still
never splits a tool pair, never tags the first or last visible message, and success is judged by the recount.
Code path: the cut choice (``choose_cut``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, Cut


class V(Agent):
    name = "legit-b2-cut-margin"

    def choose_cut(
        self, history: Sequence[Message], visible: list[int], raws: list[int], raw_total: int, raw_budget: int
    ) -> Cut | None:
        margin = raw_budget * 9 // 10 if raw_budget > 0 else raw_budget
        return super().choose_cut(history, visible, raws, raw_total, margin)


describe, normalize, effective, request, recover, count = V().ops()
