"""The recount copies Roo-Code's ``newContextTokensAfterTruncation`` predicate: it leaves out only the
messages a truncation hid, so condensed messages (before the last summary, or tagged with an existing
summary's ``condenseParent``) are counted although the API never sees them. A condensed history whose
request is within budget is judged over it and truncated, or refused.

Breaks: contract §4 (Count: ``count(systemPrompt) + count(effective history)``) and rule 2 (a history
within budget comes back unchanged, with no error).
Code path: the recount (``recount``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b3-recount-condensed"

    def recount(self, history: Sequence[Message], system_prompt: str) -> int:
        markers = {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        shown = [m for m in history if m.truncation_parent not in markers]
        c = self.counter
        return c.count_text(system_prompt) + c.count_messages(shown)


describe, normalize, effective, request, recover, count = V().ops()
