"""Every image counts 300 tokens, base64 ones included, instead of ceil(sqrt(len(data))).

300 is the agents' figure for images without inline data (domain §4.6, §7 D3); applied to base64
screenshots it under- or over-counts each by hundreds of tokens (contract §5).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._count import count_with, default_raw

CLAUSE = "contract §5"

describe = describe_as("bug_count_flat_images", ["count"])


def _raw(block: dict[str, Any]) -> int:
    return 300 if block.get("type") == "image" else default_raw(block)


def count(params: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": count_with(params, _raw)}
