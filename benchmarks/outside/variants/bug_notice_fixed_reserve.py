"""The notice is reserved as a fixed 8 tokens ("about one short sentence"), but the real notice is about 16, so a
cut that frees 9-16 tokens is accepted although the block does not shrink in tokens.

Breaks: contract §4 rule 5 (every edited block strictly shrinks in tokens, notice included); domain §3.7 finding 1.
Code path: the acceptance check of one cut (``shrink``).
"""

import math

from _kit import FLOOR_CHARS, Agent, Text, cut_text, text_of, textual_chars, with_text

NOTICE_TOKENS = 8


class V(Agent):
    name = "bug-notice-fixed-reserve"

    def shrink(self, block, item, raw_to_free):
        c = self.counter
        text = text_of(block, item)
        old_raw = c.raw_block(block)
        if old_raw <= 0 or len(text) <= FLOOR_CHARS:
            return None
        chars_per_token = max(textual_chars(block), 1) / old_raw
        keep = max(FLOOR_CHARS, len(text) - math.ceil((raw_to_free + NOTICE_TOKENS) * chars_per_token))
        freed = c.raw_text(text) - c.raw_block(Text(text[:keep]))  # tokens the dropped tail carried
        if freed <= NOTICE_TOKENS:
            return None  # the notice would eat what we free
        new_block = with_text(block, item, cut_text(text, keep))
        return new_block, c.raw_block(new_block)


describe, normalize, effective, request, recover, count = V().ops()
