"""Cline's cut rule: the hidden range ends on an assistant message, so the first kept holds a hidden call's results.

Cline removes an even count ending on an assistant message (domain §6), which keeps user/assistant
alternation; but when that assistant made tool calls, the first kept user message holds their
results and is sent after the marker with no call before it (400 "unexpected tool_use_id";
contract §4.4). Code path: the rule deciding where a cut may end.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.4"


class EndsOnAssistant(FieldRecovery):
    def may_end_cut(self, msgs: list[dict[str, Any]], vis: list[int], p: int) -> bool:
        return msgs[vis[p]].get("role") == "assistant"  # the bug: alternation, not pairing


describe = describe_as("bug_cut_ends_on_assistant", ["recover"])
recover = EndsOnAssistant()
