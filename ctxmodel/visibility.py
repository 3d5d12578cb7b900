"""The one visibility predicate: which stored messages the API sees (contract §2, domain §2.1, §7 B).

Every function that needs to know what is visible (recount, truncation, degradation, the request
builder) calls :func:`visible_mask`, so they can never disagree (domain §7 B8): in the field,
truncation, recount and ``getEffectiveApiHistory`` each had their own notion and drifted apart.
The same rule on JSON, for the yardsticks and the strategies, is ``ctxmodel.contract_data``'s; it is
restated here on the model rather than called, so that the properties, which judge with that one,
are not blind to a bug in this one (``tests/property/test_spec_agreement.py`` holds the two to agree).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodel.model import History, Message

__all__ = ["effective", "visible_mask"]


def _existing_parents(history: Sequence[Message]) -> tuple[frozenset[str], frozenset[str]]:
    """Summary ids and marker ids present anywhere in the input, hidden or not (contract §2).

    "Anywhere" rather than "in the visible slice" because a parent's existence is what a rewind
    changes: deleting the summary or marker makes what it hid visible again (domain §7 B6).
    """
    summaries: set[str] = set()
    markers: set[str] = set()
    for message in history:
        if message.is_summary:
            cid = message.condense_id
            if cid is not None:
                summaries.add(cid)
        if message.is_truncation_marker:
            tid = message.truncation_id
            if tid is not None:
                markers.add(tid)
    return frozenset(summaries), frozenset(markers)


def visible_mask(history: Sequence[Message]) -> list[bool]:
    """``mask[i]`` is whether ``history[i]`` is in the effective history (contract §2).

    - With a summary present, everything before the last summary is out (domain §2.1 branch A) and
      the last summary itself is always in, whatever tags it carries (domain §7 B2).
    - Any other candidate is hidden when its ``condenseParent`` names an existing summary or its
      ``truncationParent`` names an existing marker; a dangling parent hides nothing (rewind restores).
    """
    summaries, markers = _existing_parents(history)
    start = -1  # index of the last summary, -1 when there is none
    for i in range(len(history) - 1, -1, -1):
        if history[i].is_summary:
            start = i
            break
    mask: list[bool] = []
    for i, message in enumerate(history):
        if start >= 0 and i < start:
            mask.append(False)
            continue
        if i == start:
            mask.append(True)
            continue
        cparent = message.condense_parent
        tparent = message.truncation_parent
        hidden = (cparent is not None and cparent in summaries) or (tparent is not None and tparent in markers)
        mask.append(not hidden)
    return mask


def effective(history: Sequence[Message]) -> History:
    """The effective history: an order-preserving subsequence of the input, no content edited (§2).

    Returned messages are the input's own (frozen) objects: nothing is cloned because nothing changes.
    """
    return tuple(m for m, keep in zip(history, visible_mask(history), strict=True) if keep)
