"""Synthetic results as the field writes them: "Tool execution was interrupted before completion." without is_error.

``validateAndFixToolResultIds`` marks by text only (domain §4.1 step 5); contract §3.3 accepts a mark
by ``is_error`` or by text naming the interruption.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import SYNTHETIC_TEXT, FieldNormalizer, describe_as

CLAUSE = "contract §3.3"


class ZooSynthetic(FieldNormalizer):
    def synthetic(self, tool_id: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": tool_id, "content": SYNTHETIC_TEXT}


describe = describe_as("legit_zoo_synthetic", ["normalize"])
normalize = ZooSynthetic()
