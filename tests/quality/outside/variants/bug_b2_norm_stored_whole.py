"""A stored history is normalized as one array, hidden messages included, so pairing and the repeated-id
rule look across hidden messages: a visible call that reuses the id of a condensed one is removed with its
results, and a visible call whose results sit in a hidden message gets none.

Breaks: contract §3 (judged on what is sent: the rules apply between visible messages), rules 2 and 5
(a valid result of the request is dropped; an id is "repeated" only when used earlier in the request).
Code path: the stored-history wrapper of normalization (``normalize_stored``).
"""

from collections.abc import Sequence

from ctxmodel.model import History, Message

from ._kit import Agent


class V(Agent):
    name = "bug-b2-norm-stored-whole"

    def normalize_stored(self, history: Sequence[Message], orphans: str = "drop", trailing: str = "leave") -> History:
        return self.normalize_history(history, orphans, trailing)


describe, normalize, effective, request, recover, count = V().ops()
