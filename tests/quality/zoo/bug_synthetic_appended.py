"""Synthetic results for missing calls are appended after the user's text instead of leading the message.

``injectSyntheticToolResults`` puts what it synthesizes at the end (domain §4.5); the API wants every
result before any other block of the message (domain §5.1), so the request is refused.
"""

from __future__ import annotations

from tests.quality.zoo._common import SYNTHETIC_TEXT, FieldNormalizer, describe_as

CLAUSE = "contract §3.1"


def _synthetic(block: dict[str, object]) -> bool:
    return block.get("content") == SYNTHETIC_TEXT and block.get("is_error") is True


class Appended(FieldNormalizer):
    def arrange(self, head: list[dict[str, object]], others: list[dict[str, object]]) -> list[dict[str, object]]:
        real = [b for b in head if not _synthetic(b)]
        made = [b for b in head if _synthetic(b)]
        return real + others + made  # the bug: made-up results go last


describe = describe_as("bug_synthetic_appended", ["normalize"])
normalize = Appended()
