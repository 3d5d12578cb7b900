"""A message is hidden whenever it carries a ``truncationParent`` or ``condenseParent``, whether or not the marker
or summary it names still exists, so a rewind that deleted the marker does not bring its messages back.

Breaks: contract §2 ("a parent that no longer exists hides nothing (rewind restores)").
Code path: the visibility predicate's tag test (``visible``), as truncateConversation counts visible messages
(domain §3.3 step 1).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-vis-dangling-parent-hides"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        return [
            i == start or (i > start and m.condense_parent is None and m.truncation_parent is None)
            for i, m in enumerate(history)
        ]


describe, normalize, effective, request, recover, count = V().ops()
