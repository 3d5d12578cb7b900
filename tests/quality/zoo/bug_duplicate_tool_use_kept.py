"""A tool_use id repeated in a later assistant message is kept (rule 5 never applied).

Providers that reuse ids (domain §1.2 prefixes, DeepSeek's ``call_00_``) produce repeats; the API
rejects a request where one ``tool_use`` id appears twice (domain §7 A4).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.5"


class NoRule5(FieldNormalizer):
    def dedupe_tool_uses(self, messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        return list(enumerate(messages))


describe = describe_as("bug_duplicate_tool_use_kept", ["normalize"])
normalize = NoRule5()
