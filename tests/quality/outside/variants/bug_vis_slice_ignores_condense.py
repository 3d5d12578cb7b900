"""With a summary present, the effective history is the slice from the last summary minus what truncation hid;
``condenseParent`` is never looked at again, so a message after the last summary that an existing summary
condensed is sent.

Breaks: contract §2 (hidden when ``condenseParent`` names a summary that exists, after the last summary too).
Code path: the visibility predicate's summary branch (``visible``), as getEffectiveApiHistory Branch A does it
(domain §2.1).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-vis-slice-ignores-condense"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        if start < 0:
            return super().visible(history)
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        return [i == start or (i > start and m.truncation_parent not in markers) for i, m in enumerate(history)]


describe, normalize, effective, request, recover, count = V().ops()
