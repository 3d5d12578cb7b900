"""A text is cut to ``max(200, len - chars_to_free)`` characters and the notice appended, with no room reserved for
the notice and no check that the block got smaller, so a text just above the floor grows.

Breaks: contract §4 rule 5 (every edited block strictly shrinks, in characters and in tokens, notice included);
domain §3.7 review finding 1.
Code path: the cut size (``shrink``).
"""

import math

from _kit import FLOOR_CHARS, Agent, cut_text, text_of, textual_chars, with_text


class V(Agent):
    name = "bug-notice-unreserved"

    def shrink(self, block, item, raw_to_free):
        text = text_of(block, item)
        old_raw = self.counter.raw_block(block)
        if old_raw <= 0 or len(text) <= FLOOR_CHARS:
            return None
        chars_per_token = max(textual_chars(block), 1) / old_raw
        keep = max(FLOOR_CHARS, len(text) - math.ceil(raw_to_free * chars_per_token))
        new_block = with_text(block, item, cut_text(text, keep))
        return new_block, self.counter.raw_block(new_block)


describe, normalize, effective, request, recover, count = V().ops()
