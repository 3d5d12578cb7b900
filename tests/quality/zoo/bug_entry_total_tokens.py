"""The within-budget test reads the reported totalTokens as the request's size, forgetting the last message.

``prevContextTokens = totalTokens + lastMessageTokens`` (domain §3.1): Task hands ``manageContext`` the
previous request's usage, and the message just appended is counted on top. A port that tests
``totalTokens <= allowed`` alone returns an over-budget history unchanged and without an error when the
last message (a large tool result, typically) is what tips it over: zero progress reported as success,
and the identical request is retried (domain §3.5). Code path: the entry check, before any cut.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.6"


class StaleEntryCheck(FieldRecovery):
    def within_budget(self, params: dict[str, Any], prev: int, allowed: int) -> bool:
        reported = params.get("totalTokens", prev)  # the bug: + the last message's own count is missing
        return int(reported) <= allowed


describe = describe_as("bug_entry_total_tokens", ["recover"])
recover = StaleEntryCheck()
