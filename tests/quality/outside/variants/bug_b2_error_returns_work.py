"""When recovery cannot reach the budget, the controlled error carries the partly recovered history (what
was hidden and shrunk so far) instead of the input.

Breaks: contract §4 rule 8 (a controlled error returns the messages as they were, the input unchanged).
Code path: the success decision (``decide``).
"""

from typing import Any

from ctxmodel.model import History

from ._kit import Agent


class V(Agent):
    name = "bug-b2-error-returns-work"

    def decide(
        self,
        source: History,
        work: History,
        prev: int,
        new: int,
        allowed: int,
        removed: int,
        degraded: int,
        tid: str | None,
    ) -> dict[str, Any]:
        out = super().decide(source, work, prev, new, allowed, removed, degraded, tid)
        if out["error"] is not None:
            out["messages"] = work  # "keep what we managed, the retry starts from there"
        return out


describe, normalize, effective, request, recover, count = V().ops()
