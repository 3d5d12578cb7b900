"""A Python port serializes tool_use input with ``json.dumps`` defaults, not JavaScript's ``JSON.stringify``.

``json.dumps`` puts spaces after ``,`` and ``:`` and prints ``1.0`` where JavaScript prints ``1``
(domain §4.6, §7 D4); every tool call is counted a few tokens off the agents' figure (contract §5).
"""

from __future__ import annotations

import json
from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._count import count_with, default_raw

CLAUSE = "contract §5"

describe = describe_as("bug_count_python_json", ["count"])


def _raw(block: dict[str, Any]) -> int:
    if block.get("type") != "tool_use":
        return default_raw(block)
    from ctxmodel.tokens import get_counter

    text = f"Tool: {block.get('name')}\nArguments: {json.dumps(block.get('input'))}"
    return int(get_counter("zoo").raw_text(text))


def count(params: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": count_with(params, _raw)}
