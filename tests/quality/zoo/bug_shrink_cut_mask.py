"""Degradation cuts any tool result the truncation just kept, so results hidden before this call get cut.

After a cut the candidates are "every message not tagged with this call's truncationId" (the cut's
own bookkeeping), and with no cut at all, every message: what an earlier summary or truncation hid
is cut too, freeing tokens the API never saw (domain §3.7 reviewer finding 2; contract §4.5, §2).
Code path: the hand-over of the visible set from truncation to degradation.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class CutMask(FieldRecovery):
    def shrink_mask(self, msgs: list[dict[str, Any]], tid: str | None) -> list[bool]:
        # the bug: "kept by this cut" is not "visible"
        return [tid is None or m.get("truncationParent") != tid for m in msgs]


describe = describe_as("bug_shrink_cut_mask", ["recover"])
recover = CutMask()
