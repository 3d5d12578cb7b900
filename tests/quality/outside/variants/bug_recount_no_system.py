"""The recount that decides "within budget" counts the effective history but not the system prompt.

Breaks: contract §4 budget count (``count(systemPrompt) + count(effective history)``), hence rules 6 and 7: a
history that fits only without the system prompt is returned unchanged or "recovered" without an error.
Code path: the recount (``recount``), as Roo-Code counted before its May 2025 fix (domain §3.6).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-recount-no-system"

    def recount(self, history: Sequence[Message], system_prompt: str) -> int:
        return self.counter.count_messages(self.effective_history(history))


describe, normalize, effective, request, recover, count = V().ops()
