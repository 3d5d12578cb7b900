"""The cut's "do not split a call from its results" check looks at the next stored message, not the next visible one.

With a hidden message stored between an assistant ``tool_use`` and the user message holding its
results (a note an earlier truncation hid, stored there by Zoo's merge-on-save by ``ts``, domain
§1.3, §7 B8), the stored neighbour holds no results, so the cut may end on the call and keep its
results: the request then sends them after the new marker (contract §4.4: no new pairing
violation). Code path: the neighbour lookup of the cut's pair guard.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.4"


class StoredNeighbour(FieldRecovery):
    def holds_results(self, msgs: list[dict[str, Any]], vis: list[int], p: int) -> bool:
        i = vis[p]
        if i + 1 >= len(msgs) or p + 1 >= len(vis):
            return False
        here, nxt = msgs[i], msgs[i + 1]  # the bug: the stored neighbour, not msgs[vis[p + 1]]
        if here.get("role") != "assistant" or not isinstance(here.get("content"), list):
            return False
        ids = {b.get("id") for b in here["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        if not ids or nxt.get("role") != "user" or not isinstance(nxt.get("content"), list):
            return False
        return any(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids
                   for b in nxt["content"])


describe = describe_as("bug_cut_stored_neighbour", ["recover"])
recover = StoredNeighbour()
