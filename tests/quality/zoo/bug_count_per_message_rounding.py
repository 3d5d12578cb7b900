"""The counter applies the 1.5 fudge and rounds up per message, not once per call.

``newContextTokensAfterTruncation`` sums per-message counts, each rounded on its own (domain §3.2,
§7 D2, D9); a ``count`` op that does the same over-counts by up to one token per message, and every
budget decision taken with it disagrees with the request's count (contract §5).
"""

from __future__ import annotations

import math
from typing import Any

from ctxmodel import codec
from tests.quality.zoo._common import describe_as
from tests.quality.zoo._count import default_raw

CLAUSE = "contract §5"

describe = describe_as("bug_count_per_message_rounding", ["count"])


def count(params: dict[str, Any]) -> dict[str, Any]:
    from ctxmodel.tokens import get_counter

    total = int(get_counter("zoo").count_text(params.get("systemPrompt", "")))
    for message in codec.copy_json(params["messages"]):
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        total += math.ceil(1.5 * sum(default_raw(b) for b in items))  # the bug: rounded per message
    return {"tokens": total}
