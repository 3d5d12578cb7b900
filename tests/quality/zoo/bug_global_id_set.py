"""A result counts as answered when its id is any earlier tool_use, not one of the message right before.

``getEffectiveApiHistory`` and ``injectSyntheticToolResults`` collect tool_use ids in a global set
(domain §2.1 Branch A, §4.5, §8 question 3); the API pairs by adjacency, so a result whose call was two
turns ago is sent as an orphan and rejected ("unexpected tool_use_id").
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.4"


class GlobalSet(FieldNormalizer):
    def is_valid(self, result_id: str, valid: list[str], seen: list[str]) -> bool:
        return result_id in valid or result_id in seen  # the bug: "exists somewhere" is not adjacency


describe = describe_as("bug_global_id_set", ["normalize"])
normalize = GlobalSet()
