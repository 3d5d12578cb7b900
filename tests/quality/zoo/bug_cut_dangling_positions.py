"""The cut counts every message with a truncationParent as hidden, so one whose marker is gone is never a cut position.

``truncateConversation`` lists visible positions as the messages without ``truncationParent`` that
are not markers (domain §3.3 step 1), ignoring whether the marker still exists; after a rewind
deleted it, its messages are visible again (contract §2) but the cut steps over them. When such a
message is an assistant ``tool_use`` whose results the cut hides, it is sent without its results
(contract §4.4: no new pairing violation). Code path: the cut's list of visible positions.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, visible_flags
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.4"


class DanglingPositions(FieldRecovery):
    def positions(self, msgs: list[dict[str, Any]]) -> list[bool]:
        # the bug: a dangling truncationParent still takes the message out of the cut's positions
        return [shown and not m.get("truncationParent") for m, shown in zip(msgs, visible_flags(msgs), strict=True)]


describe = describe_as("bug_cut_dangling_positions", ["recover"])
recover = DanglingPositions()
