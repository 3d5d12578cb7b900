"""Rebuilding a user message keeps only text and tool_result blocks, so pasted screenshots vanish.

A hand-written allow-list that forgot ``image`` (compare ``VALID_ANTHROPIC_BLOCK_TYPES``, domain §1.2);
normalization may only repair pairing (contract §3.6, §3.8).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.6"


class NoImages(FieldNormalizer):
    def keep_other(self, block: dict[str, Any]) -> bool:
        return block.get("type") in ("text", "tool_result")


describe = describe_as("bug_drops_images", ["normalize"])
normalize = NoImages()
