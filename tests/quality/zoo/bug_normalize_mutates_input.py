"""Normalization sorts each user message's blocks in place (JavaScript ``Array.sort``), editing the caller's history.

``ensureMessageIdentifiers`` is the field's known in-place mutator (domain §1.1); the same slip in a
normalizer rewrites the stored history the caller still holds (contract §1).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as, is_result

CLAUSE = "contract §1"


class InPlace(FieldNormalizer):
    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        for msg in params["messages"]:
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, list):
                content.sort(key=lambda b: 0 if is_result(b) else 1)  # the bug: sorts the caller's list
        return super().__call__(params)


describe = describe_as("bug_normalize_mutates_input", ["normalize"])
normalize = InPlace()
