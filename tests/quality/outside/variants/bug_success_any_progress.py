"""Recovery reports success whenever it hid or shrank something, even though the recount is still over budget.

Breaks: contract §4 rule 7 (``recoverSuccess=fits``: a result without an error is within budget).
Code path: the success decision (``decide``): "we made progress, the caller retries if needed".
"""

from typing import Any

from ctxmodel.model import History

from ._kit import Agent


class V(Agent):
    name = "bug-success-any-progress"

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
        if removed or degraded:  # something changed: good enough, Task retries on a context error
            return self.succeeded(work, prev, new, removed, tid)
        return super().decide(source, work, prev, new, allowed, removed, degraded, tid)


describe, normalize, effective, request, recover, count = V().ops()
