"""When recovery cannot reach the budget, the partly recovered history is returned as a success (the failure is logged).

LiteLLM's ``trim_messages`` logs any exception and returns what it has (domain §6, a silent
failure); here the "still over budget" exception is caught the same way and the hidden and shrunk
history is handed back without an error: a tool result clamped at the 200-character floor leaves the
request over budget and the provider refuses it (contract §4.7). Code path: the failure handler
around the recovery steps.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.7"


class PartialOnFailure(FieldRecovery):
    def on_failure(self, params: dict[str, Any], failure: Any, prev: int) -> dict[str, Any]:
        if not failure.removed and failure.messages == params["messages"]:
            return super().on_failure(params, failure, prev)
        # the bug: partial progress is logged, not reported
        return {"messages": failure.messages, "error": None, "messagesRemoved": failure.removed,
                "prevContextTokens": prev, "newContextTokens": failure.new,
                "truncationId": failure.tid if failure.removed else None}


describe = describe_as("bug_partial_on_failure", ["recover"])
recover = PartialOnFailure()
