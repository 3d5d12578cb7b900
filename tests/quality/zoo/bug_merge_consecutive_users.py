"""Consecutive user messages are merged before pairing, so an orphan result becomes a "valid" one.

``mergeConsecutiveApiMessages`` (domain §4.2) concatenates ``[text]`` + ``[tool_result X]``; the
result, an orphan where it was stored (its message followed a user message), now sits in the message
right after X's call and is sent as X's answer — a result re-attached to a call it never answered.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, blocks, describe_as

CLAUSE = "contract §3.4"


def merge_users(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in messages:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.get("role") == "user"
            and msg.get("role") == "user"
            and not msg.get("isSummary")
            and not prev.get("isTruncationMarker")
            and not msg.get("isTruncationMarker")
        ):
            out[-1] = dict(prev, content=blocks(prev) + blocks(msg))
            continue
        out.append(msg)
    return out


class Merged(FieldNormalizer):
    def normalize(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return super().normalize(merge_users(messages))


describe = describe_as("bug_merge_consecutive_users", ["normalize"])
normalize = Merged()
