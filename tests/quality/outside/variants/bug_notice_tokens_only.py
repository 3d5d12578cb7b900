"""When the notice is longer than the characters a cut removes, the cut is still taken as long as the block got
smaller in tokens ("tokens are what the budget counts"), so a dense text just above the floor (CJK, emoji) ends
up longer in characters.

Breaks: contract §4 rule 5 (every edited block strictly shrinks in characters of the edited text *and* in tokens).
Code path: the branch of one cut where the notice outweighs the characters removed (``shrink``).
"""

from ctxmodel.model import ToolResult

from ._kit import FLOOR_CHARS, Agent, cut_text, text_of, with_text


class V(Agent):
    name = "bug-notice-tokens-only"

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        shrunk = super().shrink(block, item, raw_to_free)
        if shrunk is not None:
            return shrunk
        text = text_of(block, item)
        if len(text) <= FLOOR_CHARS:
            return None
        # the careful cut gave up: cut to the floor anyway
        new_block = with_text(block, item, cut_text(text, FLOOR_CHARS))
        new_raw = self.counter.raw_block(new_block)
        return (new_block, new_raw) if new_raw < self.counter.raw_block(block) else None


describe, normalize, effective, request, recover, count = V().ops()
