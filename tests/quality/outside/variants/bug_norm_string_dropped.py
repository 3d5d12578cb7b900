"""A user message with string content after an assistant ``tool_use`` is replaced by the synthetic results alone:
its text (the user's reply, the "tool was denied" feedback) is lost.

Breaks: contract §3 rule 6 (string content is kept: it becomes a text block after the results).
Code path: pairing a string-content message (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-norm-string-dropped"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        if isinstance(message.content, str) and uses:
            return message.with_content(tuple(self.synthetic(u) for u in uses))
        return super().pair(message, uses, valid, orphans)


describe, normalize, effective, request, recover, count = V().ops()
