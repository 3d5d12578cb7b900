"""A user message that pairing has to repair is rebuilt as a fresh ``{role, content}`` message, so its
metadata (``ts``, ``condenseParent``, ``truncationParent``, unknown keys) is lost; untouched messages keep it.

Breaks: contract §3 rule 6 (metadata keys are kept).
Code path: pairing one user message (``pair``).
"""

from collections.abc import Sequence

from ._kit import Agent, Message


class V(Agent):
    name = "bug-b2-norm-meta-dropped"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        paired = super().pair(message, uses, valid, orphans)
        if paired is None or paired is message:
            return paired
        return Message("user", paired.content)  # the repaired message, built from scratch


describe, normalize, effective, request, recover, count = V().ops()
