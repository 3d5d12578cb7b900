"""Every recovery aims halfway between the count and the budget, so the retries halve the excess and never reach it.

Declares ``recoverSuccess=converges``: a gentle first step (hide or cut only half of the excess) is a
valid policy when a later call finishes the job, but here every call aims halfway again, so after
the 3 retries the agent allows (domain §3.5) an eighth of the excess is still there, each call
reporting success (contract §4.7). Code path: the target the cut and the degradation aim at.
"""

from __future__ import annotations

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.7"


class AlwaysHalfway(FieldRecovery):
    recover_success = "converges"

    def aim(self, prev: int, allowed: int) -> int:
        return allowed + max(prev - allowed, 0) // 2  # the bug: halfway on every call, not once


describe = describe_as("bug_converges_halfway", ["recover"], recoverSuccess="converges")
recover = AlwaysHalfway()
