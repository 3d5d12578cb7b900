"""A string-content user message that needs synthetic results gets them, and loses its own text.

``typeof content === "string"`` handled by replacing the content with the result blocks: the user's
words are silently gone (contract §3.6: string content becomes a text block after the results).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.6"


class LosesString(FieldNormalizer):
    def string_with_results(self, text: str, head: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return head


describe = describe_as("bug_string_content_lost", ["normalize"])
normalize = LosesString()
