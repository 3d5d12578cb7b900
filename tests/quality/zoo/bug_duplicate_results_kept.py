"""Duplicate results for one call are all kept (no de-duplication before Roo-Code PR #10466).

The API accepts one ``tool_result`` per ``tool_use`` id (domain §5.1, §7 A4); a retried tool that
stored its result twice makes every later request fail.
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.1"


class KeepsDuplicates(FieldNormalizer):
    def dedupe_results(self) -> bool:
        return False


describe = describe_as("bug_duplicate_results_kept", ["normalize"])
normalize = KeepsDuplicates()
