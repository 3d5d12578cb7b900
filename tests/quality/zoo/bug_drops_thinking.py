"""Thinking blocks are stripped from assistant messages while their tool_use is kept.

Reasoning is filtered for providers that do not take it (domain §1.2); applied to Anthropic with
thinking enabled, the API refuses an assistant ``tool_use`` turn whose thinking went missing (domain §5.2).
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.6"


class NoThinking(FieldNormalizer):
    def assistant(self, msg: dict[str, Any]) -> dict[str, Any]:
        content = msg.get("content")
        if not isinstance(content, list):
            return msg
        kept = [b for b in content if b.get("type") not in ("thinking", "redacted_thinking")]
        return msg if len(kept) == len(content) or not kept else dict(msg, content=kept)


describe = describe_as("bug_drops_thinking", ["normalize"])
normalize = NoThinking()
