"""The shrink scan takes a summary or marker as existing only when the API sees it, so results it hides get cut.

The candidate scan re-implements ``getEffectiveApiHistory`` Branch A (domain §2.1): slice from the last
summary, then collect the markers and summaries *in the slice* and drop what names them. A message
after the last summary whose ``truncationParent`` names a marker stored before it (Zoo's merge by
``ts`` reorders such pairs, domain §1.3) is hidden, since its marker exists (contract §2), yet it is
a shrink candidate here and its tool result is cut, freeing tokens the API never saw (contract §4.5).
Code path: the set of existing parents in the shrink-candidate scan.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class ParentsInView(FieldRecovery):
    def shrink_mask(self, msgs: list[dict[str, Any]], tid: str | None) -> list[bool]:
        starts = [i for i, m in enumerate(msgs) if m.get("isSummary")]
        start = starts[-1] if starts else 0
        view = msgs[start:]
        # the bug: only parents inside the slice count as existing
        summaries = {m.get("condenseId") for m in view if m.get("isSummary")}
        markers = {m.get("truncationId") for m in view if m.get("isTruncationMarker")}
        mask = []
        for i, m in enumerate(msgs):
            hidden = i < start or (i > start and (m.get("condenseParent") in summaries - {None}
                                                 or m.get("truncationParent") in markers - {None}))
            mask.append(not hidden)
        return mask


describe = describe_as("bug_shrink_parents_in_view", ["recover"])
recover = ParentsInView()
