"""Visibility by truncation tags only: messages a summary replaced are sent again alongside it.

``truncateConversation`` and ``findShrinkableToolResults`` judge visibility by ``truncationParent``
alone, ignoring summaries and ``condenseParent`` (domain §3.3, §3.7 reviewer finding 2, §7 B8); used
as the effective history it double-sends everything the summary condensed.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._vis import effective_json

CLAUSE = "contract §2"

describe = describe_as("bug_vis_ignores_condense", ["effective"])


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": effective_json(params["messages"], condense=False, summary_slice=False)}
