"""A user message whose only blocks were orphans is left with empty content instead of removed.

The API refuses a message with empty content (domain §5.1, §7 A12).
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.6"


class KeepsEmpty(FieldNormalizer):
    def drop_emptied(self) -> bool:
        return False


describe = describe_as("bug_keeps_emptied_message", ["normalize"])
normalize = KeepsEmpty()
