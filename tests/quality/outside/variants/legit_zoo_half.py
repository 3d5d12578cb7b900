"""Legitimate: the sliding window hides half of the visible messages, rounded down to even (Zoo-Code's amount,
domain §3.3), whenever that cut is allowed and fits; otherwise it cuts as the reference does.

Contract: §4 "**How much** a target hides is its own choice (Zoo-Code hides half, rounded down to even)"; rules
3 and 4 still hold because only cuts that split no pair and add no pairing violation are considered.
Code path: the cut choice (``choose_cut``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, Cut


class V(Agent):
    name = "legit-zoo-half"

    def choose_cut(
        self, history: Sequence[Message], visible: list[int], raws: list[int], raw_total: int, raw_budget: int
    ) -> Cut | None:
        raw = (len(visible) - 1) // 2
        half = raw - raw % 2
        if half > 0:
            for cut in self.cut_candidates(history, visible, raws, raw_total):
                if cut.k >= half:
                    if cut.raw_after <= raw_budget:
                        return cut
                    break
        return super().choose_cut(history, visible, raws, raw_total, raw_budget)


describe, normalize, effective, request, recover, count = V().ops()
