"""Truncation ids are numbered from the markers present (``trunc-1``, ``trunc-2``, ...) instead of being
fresh: after a rewind deleted a marker, the messages it had hidden still carry its (now dangling) id,
the next truncation reuses that id, and its marker hides them all again, the last visible message
included, though this call tagged none of them.

Breaks: contract §4 rule 3 (messages are hidden by tagging the visible ones chosen, with a marker of
this truncation; never the last visible message).
Code path: the id factory of a truncation (``new_id``); shows on the call after a rewind.
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b3-trunc-id-sequence"

    def new_id(self, history: Sequence[Message]) -> str | None:
        return f"trunc-{sum(1 for m in history if m.is_truncation_marker) + 1}"


describe, normalize, effective, request, recover, count = V().ops()
