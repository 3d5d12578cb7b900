"""Messages normalization rewrites keep only role and content, losing ts, condense and truncation tags.

``buildCleanConversationHistory`` (domain §2.2) belongs at the provider edge; run inside ``normalize``
it strips ``truncationParent`` and friends, so hidden messages reappear after a save (contract §3.6).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.6"


class LosesMeta(FieldNormalizer):
    def rebuild(self, msg: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": msg["role"], "content": content}


describe = describe_as("bug_metadata_lost", ["normalize"])
normalize = LosesMeta()
