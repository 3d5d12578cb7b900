"""Roo's positional remap: an orphan takes the id of the call at its position, even one answered later.

``validateAndFixToolResultIds`` remaps an invalid result to ``toolUseBlocks[k].id`` when that id is
"unused" (domain §4.1 step 4) — checked against the results seen *so far*, so a valid result for the
same id further on is then dropped as a duplicate: the orphan's content is sent as that call's answer.
Declares ``orphans=relabel``, which allows relabelling only onto a call with no valid result.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.2"


class PositionalRemap(FieldNormalizer):
    orphans = "relabel"

    def orphan(self, block: dict[str, Any], uses: list[str], taken: set[str]) -> dict[str, Any] | None:
        position = len(taken)  # the k-th result of the message
        if position < len(uses) and uses[position] not in taken:  # the bug: "unused so far"
            return dict(block, tool_use_id=uses[position])
        return None


describe = describe_as("bug_roo_positional_remap", ["normalize"], orphans="relabel")
normalize = PositionalRemap()
