"""The summary branch starts at the first summary (``find``) instead of the last (``findLast``), so after a second
condense the older summary and the messages it left are sent again.

Breaks: contract §2 ("only the last summary and what follows it are candidates").
Code path: the visibility predicate's choice of the slice start (``visible``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-vis-first-summary"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        summaries = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        start = next((i for i, m in enumerate(history) if m.is_summary), -1)
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
