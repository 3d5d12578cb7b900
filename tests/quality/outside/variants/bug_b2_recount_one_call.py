"""The recount puts the system prompt and the effective history through one counter call, so the fudge is
rounded up once instead of twice and the figure is one token low when both parts have an odd raw count.

Breaks: contract §4 (Count: two counter calls, the fudge applied once in each) and rules 2, 6, 7 (a history
one token over budget is judged within it and returned unchanged as a success).
Code path: the recount (``recount``).
"""

from collections.abc import Sequence

from ctxmodel.model import Message

from ._kit import Agent


class V(Agent):
    name = "bug-b2-recount-one-call"

    def recount(self, history: Sequence[Message], system_prompt: str) -> int:
        c = self.counter
        raw = c.raw_text(system_prompt) + sum(self.raw_message(m) for m in self.effective_history(history))
        return c.fudged(raw)


describe, normalize, effective, request, recover, count = V().ops()
