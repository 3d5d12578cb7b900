"""Text holding a special-token string such as ``<|endoftext|>`` makes the counter raise.

tiktoken's ``encode`` refuses special-token text by default (``disallowed_special="all"``); the agents
pass an empty set so it counts as text (domain §4.6, §7 D6). A pasted log line then crashes the task.
"""

from __future__ import annotations

import json
from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._count import count_with

CLAUSE = "contract §5"

describe = describe_as("bug_count_special_tokens_raise", ["count"])

SPECIAL = ("<|endoftext|>", "<|endofprompt|>", "<|im_start|>", "<|im_end|>", "<|im_sep|>",
           "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>")


def count(params: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(params.get("messages")) + str(params.get("systemPrompt", ""))
    for token in SPECIAL:
        if token in text:  # what tiktoken.encode(text) does with the default disallowed_special
            raise ValueError(f"Encountered text corresponding to disallowed special token {token!r}.")
    return {"tokens": count_with(params)}
