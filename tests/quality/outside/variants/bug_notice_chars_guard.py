"""A cut is accepted when the text got shorter in characters; whether the block got smaller in tokens is not
checked, so a highly compressible tail (spaces, repeated characters) cut for a notice costs more tokens than it
frees.

Breaks: contract §4 rule 5 (every edited block strictly shrinks in tokens as the counter counts it, notice
included).
Code path: the acceptance check of one cut (``shrink``): characters as a proxy for tokens.
"""

import math

from ctxmodel.model import ToolResult

from ._kit import FLOOR_CHARS, Agent, cut_text, notice_text, text_of, textual_chars, with_text


class V(Agent):
    name = "bug-notice-chars-guard"

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        c = self.counter
        text = text_of(block, item)
        old_raw = c.raw_block(block)
        if old_raw <= 0 or len(text) <= FLOOR_CHARS:
            return None
        chars_per_token = max(textual_chars(block), 1) / old_raw
        notice_chars = len(notice_text(len(text)))
        keep = max(FLOOR_CHARS, len(text) - math.ceil(raw_to_free * chars_per_token) - notice_chars)
        new_text = cut_text(text, keep)
        if len(new_text) >= len(text):
            return None  # it would not get shorter
        new_block = with_text(block, item, new_text)
        return new_block, c.raw_block(new_block)


describe, normalize, effective, request, recover, count = V().ops()
