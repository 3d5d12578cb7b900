"""With several summaries, the effective history starts at the first one instead of the last.

``findIndex`` where ``findLastIndex`` was meant (domain §2.1 Branch A step 1): earlier condensed
rounds are sent again next to the summaries that replaced them.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._vis import effective_json

CLAUSE = "contract §2"

describe = describe_as("bug_vis_first_summary", ["effective"])


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": effective_json(params["messages"], last_summary=False)}
