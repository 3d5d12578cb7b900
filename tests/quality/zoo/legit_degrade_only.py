"""Recovery that never hides messages: it only cuts visible tool-result texts, largest first, each strictly shorter.

Zoo-Code PR #1617's degradation after review (domain §3.7), used alone: a valid strategy for agents
that must keep every turn visible; it errors where only hiding would help (a warning, contract §4.8).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._degrade import shrink_recover

CLAUSE = "contract §4.5"

describe = describe_as("legit_degrade_only", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    return shrink_recover(params)
