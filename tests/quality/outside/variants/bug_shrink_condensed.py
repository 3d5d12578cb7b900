"""The shrink-candidate scan skips only messages the sliding window hid (``truncationParent``) and markers, so tool
results hidden by a condense (``condenseParent``, or before the last summary) are cut too.

Breaks: contract §4 rule 5 (degradation only of visible tool_result text) and §2 (one visibility predicate).
Code path: the candidate scan (``candidates``): Zoo-Code PR #1617's findShrinkableToolResults, review finding 2.
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent, Unit


class V(Agent):
    name = "bug-shrink-condensed"

    def candidates(self, history: Sequence[Message], mask: list[bool]) -> list[Unit]:
        shown = [m.truncation_parent is None and not m.is_truncation_marker for m in history]
        return super().candidates(history, shown)


describe, normalize, effective, request, recover, count = V().ops()
