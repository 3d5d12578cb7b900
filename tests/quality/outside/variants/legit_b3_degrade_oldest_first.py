"""Legitimate: degradation cuts the oldest visible tool-result texts first (the earliest in the
conversation are the least likely to matter to the next turn), not the largest.

Mistake: none. Contract §4 reference choices (the largest first is the reference's choice, not a
requirement); rule 5 still holds: only visible textual tool-result text is edited, each edited block
strictly shrinks in characters and tokens, and success is judged by the recount (rule 7).
Code path: the candidate scan (``candidates``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, Unit


class V(Agent):
    name = "legit-b3-degrade-oldest-first"

    def candidates(self, history: Sequence[Message], mask: list[bool]) -> list[Unit]:
        units = super().candidates(history, mask)
        return sorted(units, key=lambda u: (u.message, u.block, -1 if u.item is None else u.item))


describe, normalize, effective, request, recover, count = V().ops()
