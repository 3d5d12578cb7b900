"""Truncation markers are treated as bookkeeping, not context: the cut is planned and the result recounted without
the marker it inserts (Roo-Code's newContextTokensAfterTruncation skips markers, domain §3.2).

Breaks: contract §4 count (the effective history, markers included), hence rules 7 and 9 when the marker's own
tokens tip the result over budget.
Code path: the recount (``recount``) and the cut's cost estimate (``marker_raw``): one notion, applied to both.
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-count-skips-markers"

    def marker_raw(self, k: int) -> int:
        return 0

    def recount(self, history: Sequence[Message], system_prompt: str) -> int:
        shown = [m for m in self.effective_history(history) if not m.is_truncation_marker]
        return self.counter.count_text(system_prompt) + self.counter.count_messages(shown)


describe, normalize, effective, request, recover, count = V().ops()
