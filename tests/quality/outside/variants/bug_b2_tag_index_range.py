"""The truncation tags every stored message between the first visible message and the first kept one, by
index, so messages already hidden (condensed, or by an earlier truncation) and earlier truncation markers in
that range are tagged too.

Breaks: contract §4 rule 3 (only visible messages are tagged, never the markers of earlier truncations).
Code path: one truncation with its marker (``apply_cut``).
"""

from collections.abc import Sequence

import attrs

from ctxmodel.model import History, Message

from ._kit import Agent, Cut


class V(Agent):
    name = "bug-b2-tag-index-range"

    def apply_cut(self, history: Sequence[Message], cut: Cut, truncation_id: str) -> History:
        first = self.visible(history).index(True)
        span = attrs.evolve(cut, hidden=tuple(range(first + 1, cut.first_kept)))
        return super().apply_cut(history, span, truncation_id)


describe, normalize, effective, request, recover, count = V().ops()
