"""Orphans with string content become text, orphans with list content are dropped (orphans=any).

A target may decide per orphan (contract §3.4 ``any``): Zoo-Code drops, Roo-Code's append path
converts, and a mixed pipeline does both.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.4"


class Mixed(FieldNormalizer):
    orphans = "any"

    def orphan(self, block: dict[str, Any], uses: list[str], taken: set[str]) -> dict[str, Any] | None:
        content = block.get("content")
        if isinstance(content, str):
            return {"type": "text", "text": "Tool result:\n" + content}
        return None


describe = describe_as("legit_orphans_any", ["normalize"], orphans="any")
normalize = Mixed()
