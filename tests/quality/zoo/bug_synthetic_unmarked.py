"""The synthetic result for a missing call reads "(no output)", without is_error: the model thinks it ran.

A placeholder copied from a UI string; contract §3.3 requires a synthetic result to be marked (by
``is_error`` or by text naming the interruption), or the model takes a call that never ran as done.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.3"


class Unmarked(FieldNormalizer):
    def synthetic(self, tool_id: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": tool_id, "content": "(no output)"}


describe = describe_as("bug_synthetic_unmarked", ["normalize"])
normalize = Unmarked()
