"""When a user message holds as many results as the assistant made calls, the results are given the calls' ids in
order ("fix the ids by position"), so results stored out of call order are cross-wired and an orphan takes the
id of a call.

Breaks: contract §3 rule 2 ("a valid result is never moved to another id") and rule 4 (orphans per policy).
Code path: the id repair before pairing (``pair``).
"""

from collections.abc import Sequence

import attrs

from ctxmodel.model import Message

from ._kit import Agent, ToolResult


class V(Agent):
    name = "bug-norm-positional-ids"

    def pair(self, message: Message, uses: Sequence[str], valid: Sequence[str], orphans: str) -> Message | None:
        if not isinstance(message.content, str) and valid:
            results = [b for b in message.content if isinstance(b, ToolResult)]
            if len(results) == len(valid):
                ids = iter(valid)
                message = message.with_content(
                    tuple(
                        attrs.evolve(b, tool_use_id=next(ids)) if isinstance(b, ToolResult) else b
                        for b in message.content
                    )
                )
        return super().pair(message, uses, valid, orphans)


describe, normalize, effective, request, recover, count = V().ops()
