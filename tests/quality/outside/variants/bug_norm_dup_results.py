"""Duplicate results are removed only when they are exact copies, so two different results for one ``tool_use``
id (a retry, a streamed partial and its final) are both sent.

Breaks: contract §3 rule 1 (exactly one result per id) and rule 2 (one kept, the others dropped).
Code path: de-duplicating results while pairing (``pair``).
"""

import json
from collections.abc import Sequence

from ctxmodel.codec import dump_block
from ctxmodel.model import Message

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-norm-dup-results"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        paired = super().pair(message, uses, valid, orphans)
        if paired is None or isinstance(message.content, str):
            return paired
        wanted = set(valid)
        seen = {json.dumps(dump_block(b), sort_keys=True) for b in paired.content if isinstance(b, ToolResult)}
        extra = []
        for block in message.content:  # results for a valid id that differ from the one kept: keep them too
            if isinstance(block, ToolResult) and block.tool_use_id in wanted:
                key = json.dumps(dump_block(block), sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    extra.append(block)
        if not extra:
            return paired
        n = sum(1 for b in paired.content if isinstance(b, ToolResult))
        return paired.with_content((*paired.content[:n], *extra, *paired.content[n:]))


describe, normalize, effective, request, recover, count = V().ops()
