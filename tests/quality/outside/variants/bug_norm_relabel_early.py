"""Under ``orphans=relabel``, an orphan result takes the id of the ``tool_use`` at its position when no result for
that id has been *seen yet*, so an orphan that comes before the genuine result steals its id and the genuine
result is then dropped as a duplicate.

Breaks: contract §3 rule 4 (``relabel`` only onto a call that has no valid result) and rule 2 (a valid result is
kept with its content).
Code path: relabelling orphans while scanning the message (``pair``), Roo-Code's positional remap (domain §4.1
step 4) checked incrementally instead of against all results.
"""

from collections.abc import Sequence

import attrs

from ctxmodel.model import Message

from ._kit import Agent, ToolResult, declare


class V(Agent):
    name = "bug-norm-relabel-early"
    policies = declare(orphans="relabel")

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        if isinstance(message.content, str) or not valid:
            return super().pair(message, uses, valid, orphans)
        wanted = set(valid)
        answered = set()
        position = 0
        blocks = []
        for block in message.content:
            if isinstance(block, ToolResult):
                if block.tool_use_id not in wanted and position < len(valid) and valid[position] not in answered:
                    block = attrs.evolve(block, tool_use_id=valid[position])
                answered.add(block.tool_use_id)
                position += 1
            blocks.append(block)
        return super().pair(message.with_content(tuple(blocks)), uses, valid, orphans)


describe, normalize, effective, request, recover, count = V().ops()
