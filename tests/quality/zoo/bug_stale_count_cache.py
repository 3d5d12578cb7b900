"""Token counts are cached per message by its ``ts``, so a later request reuses the count of another message.

Zoo keys its merge-on-save by ``ts`` (domain §1.3); a count cache keyed the same way survives between
requests and answers for a different message with the same timestamp (contract §1: a reply never
depends on hidden state from earlier requests). The stale count says "fits" and nothing is done.
"""

from __future__ import annotations

import json
from typing import Any

from tests.quality.zoo._common import allowed_for, describe_as, recount, reference_recover

CLAUSE = "contract §1"

describe = describe_as("bug_stale_count_cache", ["recover"])

_RAW_BY_TS: dict[str, int] = {}


def _message_tokens(message: dict[str, Any]) -> int:
    key = f"{message.get('role')}:{message['ts']}" if "ts" in message else json.dumps(message, sort_keys=True)
    if key not in _RAW_BY_TS:
        _RAW_BY_TS[key] = recount([message])
    return _RAW_BY_TS[key]


def recover(params: dict[str, Any]) -> dict[str, Any]:
    system = params.get("systemPrompt", "")
    estimate = recount([], system) + sum(_message_tokens(m) for m in params["messages"])
    allowed = allowed_for(params)
    if 0 < allowed and estimate <= allowed:
        prev = recount(params["messages"], system)
        return {"messages": params["messages"], "error": None, "messagesRemoved": 0,
                "prevContextTokens": prev, "newContextTokens": prev, "truncationId": None}
    return reference_recover(params)
