"""Results moved to the front are rebuilt from id and content only, dropping ``is_error``.

A failed command then reads as a success to the model; a kept result keeps its content and
``is_error`` unchanged (contract §3.2, domain §7 A6).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.2"


class LosesIsError(FieldNormalizer):
    def keep_result(self, block: dict[str, Any]) -> dict[str, Any]:
        out = {"type": "tool_result", "tool_use_id": block["tool_use_id"]}
        if "content" in block:
            out["content"] = block["content"]
        return out


describe = describe_as("bug_result_is_error_lost", ["normalize"])
normalize = LosesIsError()
