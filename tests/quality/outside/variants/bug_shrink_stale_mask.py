"""The shrinkable tool results are chosen by what was visible before this call's truncation, so results in the
messages the same call has just hidden get cut.

Breaks: contract §4 rule 5 (degradation only of visible tool_result text: visible in the result).
Code path: the hand-over from truncation to degradation (``shrink_mask`` reuses the input's visibility).
"""

from ctxmodel.model import History

from ._kit import Agent


class V(Agent):
    name = "bug-shrink-stale-mask"

    def shrink_mask(self, source: History, work: History) -> list[bool]:
        # "Find the shrinkable results once, up front": the input's visibility, mapped onto the truncated
        # history (the only new message is this call's marker; tagged messages keep their places).
        before = iter(self.visible(source))
        originals = {id(m) for m in source}
        return [True if m.is_truncation_marker and id(m) not in originals else next(before) for m in work]


describe, normalize, effective, request, recover, count = V().ops()
