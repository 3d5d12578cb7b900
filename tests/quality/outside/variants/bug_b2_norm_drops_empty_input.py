"""After pairing a user message, any message with nothing in it is dropped ("never send an empty message"),
including one that was already empty in the input and that pairing did not touch.

Breaks: contract §3 rule 8 (a message that was already empty passes through unchanged, for the oracle to
report; only a message that normalization empties is removed).
Code path: pairing one user message (``pair``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b2-norm-drops-empty-input"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        paired = super().pair(message, uses, valid, orphans)
        if paired is not None and not paired.content:
            return None
        return paired


describe, normalize, effective, request, recover, count = V().ops()
