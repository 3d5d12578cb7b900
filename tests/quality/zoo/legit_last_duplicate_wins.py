"""Of duplicate valid results for one call, the last is kept (a retried tool's newest output).

Contract §3.2 requires one of them kept unchanged; which one is the target's choice.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.2"


class LastWins(FieldNormalizer):
    def prefer(self, first: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
        return later


describe = describe_as("legit_last_duplicate_wins", ["normalize"])
normalize = LastWins()
