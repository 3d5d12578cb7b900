"""Degradation cuts every visible tool-result text above the floor to the 200-character floor plus the notice, with
no room reserved for the notice and no check per block, so a text of 201-272 characters grows while the big
ones pay for it.

Breaks: contract §4 rule 5 (every edited block strictly shrinks, in characters and in tokens, notice included);
domain §3.7 review finding 1.
Code path: the degradation loop (``degrade``): one pass over all candidates, then one recount.
"""

from typing import cast

from ctxmodel.model import Block, History

from ._kit import FLOOR_CHARS, Agent, ToolResult, cut_text, text_of, with_text


class V(Agent):
    name = "bug-notice-unreserved"

    def degrade(
        self, work: History, mask: list[bool], system_prompt: str, allowed: int, raw_now: int, raw_budget: int, new: int
    ) -> tuple[History, int, int]:
        edited = list(work)
        done = 0
        for unit in self.candidates(work, mask):
            if unit.chars <= FLOOR_CHARS:
                continue
            message = edited[unit.message]
            block = message.content[unit.block]
            assert isinstance(block, ToolResult)
            blocks = list(cast("tuple[Block, ...]", message.content))  # holds the ToolResult above
            blocks[unit.block] = with_text(block, unit.item, cut_text(text_of(block, unit.item), FLOOR_CHARS))
            edited[unit.message] = message.with_content(tuple(blocks))
            done += 1
        if not done:
            return work, 0, new
        work = tuple(edited)
        return work, done, self.recount(work, system_prompt)


describe, normalize, effective, request, recover, count = V().ops()
