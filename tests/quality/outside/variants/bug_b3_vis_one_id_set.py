"""The existing parents are collected in one set (summary ``condenseId``s and marker ``truncationId``s
together), so a ``condenseParent`` that names a marker's id, or a ``truncationParent`` that names a
summary's id, hides its message although no parent of its own kind exists.

Breaks: contract §2 (``condenseParent`` hides only when it names a summary that exists,
``truncationParent`` only when it names a truncation marker that exists).
Code path: the visibility predicate (``visible``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b3-vis-one-id-set"

    def visible(self, history: Sequence[Message]) -> list[bool]:
        parents = {m.condense_id for m in history if m.is_summary and m.condense_id is not None}
        parents |= {m.truncation_id for m in history if m.is_truncation_marker and m.truncation_id is not None}
        start = max((i for i, m in enumerate(history) if m.is_summary), default=-1)
        mask = []
        for i, m in enumerate(history):
            if i < start:
                mask.append(False)
            elif i == start:
                mask.append(True)
            else:
                mask.append(m.condense_parent not in parents and m.truncation_parent not in parents)
        return mask


describe, normalize, effective, request, recover, count = V().ops()
