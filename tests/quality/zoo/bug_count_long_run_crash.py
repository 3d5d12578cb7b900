"""The counter crashes on a long run of one repeated character (the WASM tiktoken failure, scaled down).

Roo-Code's WASM tiktoken takes 25 s on 100,000 repeated characters and crashes near 1,000,000
(contract §5); this variant fails at 1,000 so the ``ci`` profile's inputs reach it. A target that
offers ``count`` must answer on every input.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._count import count_with

CLAUSE = "contract §5"

describe = describe_as("bug_count_long_run_crash", ["count"])

_RUN = re.compile(r"(.)\1{999,}", re.DOTALL)


def count(params: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(params.get("messages"), ensure_ascii=False) + str(params.get("systemPrompt", ""))
    if _RUN.search(text):
        raise RuntimeError("unreachable")  # what the WASM module throws when its memory runs out
    return {"tokens": count_with(params)}
