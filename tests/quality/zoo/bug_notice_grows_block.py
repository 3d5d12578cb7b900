"""Degradation cuts old tool results to a 200-character floor plus a notice, so a 201-280 character result grows.

Zoo-Code PR #1617 before its review (domain §3.7 reviewer finding 1; strands-agents #4341): the notice
is not reserved, and a block cut to the floor comes back longer than it was.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._degrade import shrink_recover

CLAUSE = "contract §4.5"

describe = describe_as("bug_notice_grows_block", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    return shrink_recover(params, largest_first=False, must_shrink=False)
