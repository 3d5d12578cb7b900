"""Valid results stay in the order they were stored, synthetic ones after them (resultOrder=any).

The Anthropic API accepts any order among the leading results (contract §3 policies); only Bedrock
reportedly wants ``tool_use`` order.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.1"


class StoredOrder(FieldNormalizer):
    def order_results(self, uses: list[str], kept: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return list(kept.values()) + [self.synthetic(u) for u in uses if u not in kept]


describe = describe_as("legit_result_order_any", ["normalize"], resultOrder="any")
normalize = StoredOrder()
