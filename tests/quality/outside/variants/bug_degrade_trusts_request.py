"""The degradation loop books each cut as freeing the tokens it asked for, so a text clamped at the 200-character
floor counts as fitting and success is reported over budget.

Breaks: contract §4 rule 7 (fits) and rule 9 (reported ``newContextTokens`` fits while the recount does not).
Code path: the degradation loop (``degrade``): bookkeeping by the requested amount instead of a recount.
"""

from typing import cast

from ctxmodel.model import Block, History

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-degrade-trusts-request"

    def degrade(
        self, work: History, mask: list[bool], system_prompt: str, allowed: int, raw_now: int, raw_budget: int, new: int
    ) -> tuple[History, int, int]:
        edited = list(work)
        done = 0
        for unit in self.candidates(work, mask):
            if raw_now <= raw_budget:
                break
            message = edited[unit.message]
            block = message.content[unit.block]
            assert isinstance(block, ToolResult)
            to_free = raw_now - raw_budget
            shrunk = self.shrink(block, unit.item, to_free)
            if shrunk is None:
                continue
            blocks = list(cast("tuple[Block, ...]", message.content))  # holds the ToolResult above
            blocks[unit.block] = shrunk[0]
            edited[unit.message] = message.with_content(tuple(blocks))
            raw_now -= to_free  # the cut was sized to free exactly this much
            done += 1
        if not done:
            return work, 0, new
        return tuple(edited), done, self.counter.count_text(system_prompt) + self.fudged(raw_now)


describe, normalize, effective, request, recover, count = V().ops()
