"""Truncation markers are left out of the effective history, so the model never learns messages were hidden.

``truncateConversation`` skips markers when it lists visible positions (domain §3.3 step 1); reused
as the effective-history predicate it drops the markers, which the field sends (domain §2.1).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._vis import effective_json

CLAUSE = "contract §2"

describe = describe_as("bug_vis_drops_markers", ["effective"])


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": effective_json(params["messages"], keep_markers=False)}
