"""Roo's positional remap done right: an orphan takes the id of a call with no valid result (orphans=relabel).

The check is against every valid result of the message, not the ones seen so far (compare
``bug_roo_positional_remap``), so no answered call is ever re-wired.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as, is_result

CLAUSE = "contract §3.4"


class Relabel(FieldNormalizer):
    orphans = "relabel"

    def pair(self, msg: dict[str, Any], uses: list[str], valid: list[str], seen: list[str]) -> dict[str, Any] | None:
        content = msg.get("content")
        answered = {b.get("tool_use_id") for b in content if is_result(b)} if isinstance(content, list) else set()
        free = [u for u in uses if u not in (answered & set(valid))]
        return _RelabelOnce(free).pair_with(self, msg, uses, valid, seen)


class _RelabelOnce(FieldNormalizer):
    """One message's relabelling: hands out the unanswered ids in order, each once."""

    orphans = "relabel"

    def __init__(self, free: list[str]) -> None:
        self.free = list(free)

    def orphan(self, block: dict[str, Any], uses: list[str], taken: set[str]) -> dict[str, Any] | None:
        while self.free:
            candidate = self.free.pop(0)
            if candidate not in taken:
                return dict(block, tool_use_id=candidate)
        return None

    def pair_with(
        self, owner: FieldNormalizer, msg: dict[str, Any], uses: list[str], valid: list[str], seen: list[str]
    ) -> dict[str, Any] | None:
        return FieldNormalizer.pair(self, msg, uses, valid, seen)


describe = describe_as("legit_relabel", ["normalize"], orphans="relabel")
normalize = Relabel()
