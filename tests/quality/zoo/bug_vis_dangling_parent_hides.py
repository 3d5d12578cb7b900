"""A message stays hidden when its truncationParent or condenseParent names a marker or summary that no longer exists.

After a rewind deletes the marker, what it hid must come back (domain §2.1 Branch B step 2, §7 B6);
here it stays hidden for ever, and the conversation silently loses its middle.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._vis import effective_json

CLAUSE = "contract §2"

describe = describe_as("bug_vis_dangling_parent_hides", ["effective"])


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": effective_json(params["messages"], require_parent=False)}
