"""The truncation protects the stored first message (the task) rather than the first *visible* one: after a
condense, the summary is just another visible message and the cut may tag it.

Breaks: contract §4 rule 3 (never tag the first visible message).
Code path: the cut candidates (``cut_candidates``).
"""

from collections.abc import Iterator, Sequence

from ctxmodel.model import Message

from ._kit import Agent, Cut


class V(Agent):
    name = "bug-b2-cut-keeps-index0"

    def cut_candidates(
        self, history: Sequence[Message], visible: list[int], raws: list[int], raw_total: int
    ) -> Iterator[Cut]:
        if visible and visible[0] != 0:  # "message 0 is the task: always keep it, the rest may go"
            head = self.raw_message(history[0])
            visible, raws, raw_total = [0, *visible], [head, *raws], raw_total + head
        yield from super().cut_candidates(history, visible, raws, raw_total)


describe, normalize, effective, request, recover, count = V().ops()
