"""The hiding test checks ``condenseParent`` first and only looks at ``truncationParent`` when there is no
condense tag (an ``if``/``elif``), so a message whose condense tag dangles (its summary was rewound) stays
visible even though its ``truncationParent`` names a marker that exists.

Breaks: contract §2 (hidden when its condenseParent names an existing summary *or* its truncationParent
names an existing marker).
Code path: the visibility predicate (``visible``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b2-vis-elif-parents"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        summaries = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        mask = []
        for i, m in enumerate(history):
            if i < start:
                mask.append(False)
            elif i == start:
                mask.append(True)
            elif m.condense_parent is not None:
                mask.append(m.condense_parent not in summaries)
            else:
                mask.append(m.truncation_parent not in markers)
        return mask


describe, normalize, effective, request, recover, count = V().ops()
