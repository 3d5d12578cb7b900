"""A tool result is a shrink candidate as soon as it is longer than the floor, though no cut of it can fit a notice.

The candidate filter tests ``len(text) > 200`` where the cut needs room for the floor *and* the
notice; for a text of 201-273 characters the prefix is clamped up to the floor and the notice is
appended, so the text grows (domain §3.7 reviewer finding 1; strands-agents #4341). Dense text just
above the floor (CJK, emoji) still frees tokens, so the token check lets it through (contract §4.5).
Code path: the eligibility test of the candidate scan.
"""

from __future__ import annotations

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._degrade import FLOOR
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class FloorOnlyEligible(FieldRecovery):
    def eligible(self, text: str) -> bool:
        return len(text) > FLOOR  # the bug: no room left for the notice


describe = describe_as("bug_notice_eligible_floor", ["recover"])
recover = FloorOnlyEligible()
