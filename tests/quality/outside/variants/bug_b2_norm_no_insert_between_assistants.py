"""Pairing is only done on user messages (as at append time): an assistant ``tool_use`` message followed
directly by another assistant message gets no user message with synthetic results between them.

Breaks: contract §3 rule 3 (when the next message is not a user message, a user message holding the
synthetic results is inserted), hence rule 1.
Code path: the message loop of normalization (``normalize_history``).
"""

from collections.abc import Sequence

from ctxmodel.model import History

from ._kit import Agent, Message, uses_of


class V(Agent):
    name = "bug-b2-norm-no-insert-between-assistants"

    def normalize_history(self, history: Sequence[Message], orphans: str = "drop", trailing: str = "leave") -> History:
        staged = self.dedupe_tool_uses(history)
        input_uses = {index: uses_of(m) for index, m in staged if m.role == "assistant"}
        out: list[Message] = []
        for index, message in staged:
            if message.role == "user":
                uses = uses_of(out[-1] if out else None)
                valid = [u for u in input_uses.get(index - 1, ()) if u in uses]
                paired = self.pair(message, uses, valid, orphans)
                if paired is not None:
                    out.append(paired)
                continue
            out.append(message)
        if trailing == "close":
            uses = uses_of(out[-1] if out else None)
            if uses:
                out.append(Message("user", tuple(self.synthetic(u) for u in uses)))
        return tuple(out)


describe, normalize, effective, request, recover, count = V().ops()
