"""A failed recovery returns the half-truncated history with its error, instead of the input unchanged.

The caller overwrites stored history whenever ``result.messages`` is a new array (domain §3.2, identity
test), so a failure still hides messages (contract §4.8: a controlled error leaves the input as it was).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, reference_recover, roo_truncate, visible_flags

CLAUSE = "contract §4.8"

describe = describe_as("bug_error_returns_partial", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    if out.get("error") and allowed_for(params) > 0:
        partial, removed, tid = roo_truncate(params["messages"], 0.5, visible_flags(params["messages"]))
        out.update(messages=partial, messagesRemoved=removed, truncationId=tid if removed else None)
    return out
