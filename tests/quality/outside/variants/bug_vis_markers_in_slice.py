"""With a summary present, only markers inside the slice from the last summary count as existing, so a message
after the summary whose ``truncationParent`` names a marker stored before the summary becomes visible.

Breaks: contract §2 ("exists" means anywhere in the input, hidden or not).
Code path: the visibility predicate's set of existing markers (``visible``), as getEffectiveApiHistory Branch A
step 4 collects them (domain §2.1).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-vis-markers-in-slice"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        summaries = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        markers = {
            m.truncation_id for m in history[max(start, 0) :] if m.is_truncation_marker and m.truncation_id is not None
        }
        mask = []
        for i, m in enumerate(history):
            if i < start:
                mask.append(False)
            elif i == start:
                mask.append(True)
            else:
                mask.append(not (m.condense_parent in summaries or m.truncation_parent in markers))
        return mask


describe, normalize, effective, request, recover, count = V().ops()
