"""Degradation counts every candidate it looked at as shrunk, so a pass that cut nothing reports progress.

Declares ``recoverSuccess=converges`` and reports success when something was hidden or shrunk, the
way PR #1617 treats ``messagesRemoved === 0`` as the only zero-progress case (domain §3.7); the
counter is bumped before the per-block check that skips a result it cannot shrink (a text between
the floor and the floor plus the notice), so "1 shrunk" comes back with nothing changed. Code path:
the degradation loop's bookkeeping.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.6"


class CountsSkips(FieldRecovery):
    recover_success = "converges"

    def degrade(
        self, msgs: list[dict[str, Any]], system: str, target: int, tid: str | None
    ) -> tuple[list[dict[str, Any]], int]:
        msgs = list(msgs)
        shrunk = 0
        for i, b, item in self.units(msgs, self.shrink_mask(msgs, tid)):
            remaining = self.count(msgs, system) - target
            if remaining <= 0:
                break
            shrunk += 1  # the bug: counted before we know the cut happened
            new_block = self.cut(msgs[i]["content"][b], item, remaining)
            if new_block is None:
                continue
            content = list(msgs[i]["content"])
            content[b] = new_block
            msgs[i] = dict(msgs[i], content=content)
        return msgs, shrunk


describe = describe_as("bug_shrunk_counts_skips", ["recover"], recoverSuccess="converges")
recover = CountsSkips()
