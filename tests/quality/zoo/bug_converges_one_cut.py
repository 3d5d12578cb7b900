"""One tool result cut per recovery ("the caller retries"), so a history with many large results never converges.

Declares ``recoverSuccess=converges`` (Roo-Code and Zoo-Code retry up to 3 times, domain §3.5) and
succeeds whenever it made progress; the degradation loop stops after its first cut, as truncation
makes one cut per call. With more oversized results than retries, or results that the floor keeps
over budget, every call reports success over budget and the fourth is still over (contract §4.7:
converge within 3 more calls). Code path: the degradation loop's stop condition.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.7"


class OneCutPerCall(FieldRecovery):
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
            new_block = self.cut(msgs[i]["content"][b], item, remaining)
            if new_block is None:
                continue
            content = list(msgs[i]["content"])
            content[b] = new_block
            msgs[i] = dict(msgs[i], content=content)
            shrunk += 1
            break  # the bug: one cut per call, the retry does the rest
        return msgs, shrunk


describe = describe_as("bug_converges_one_cut", ["recover"], recoverSuccess="converges")
recover = OneCutPerCall()
