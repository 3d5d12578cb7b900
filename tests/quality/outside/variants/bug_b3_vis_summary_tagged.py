"""The hiding rules are applied from the last summary on, the summary included: a last summary that
carries a parent tag naming an existing parent (a summary a later sliding window tagged, or one tagged
with its own ``condenseId`` at condense time) is hidden, and the request loses its summary.

Breaks: contract §2 (the last summary is always visible; the hiding rules apply to the messages after it).
Code path: the visibility predicate (``visible``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b3-vis-summary-tagged"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        summaries = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        mask = []
        for i, m in enumerate(history):
            if i < start:
                mask.append(False)
            else:
                hidden = m.condense_parent in summaries or m.truncation_parent in markers
                mask.append(not hidden)
        return mask


describe, normalize, effective, request, recover, count = V().ops()
