"""When nothing can be hidden and no tool result can be shrunk, recovery returns the history unchanged without an
error ("nothing to do here, let the caller condense"), as Zoo-Code's manageContext passes on messagesRemoved 0.

Breaks: contract §4 rule 6 (progress or error) and rule 7 (fits).
Code path: the success decision (``decide``), its zero-progress branch (domain §3.7, issue #1254).
"""

from typing import Any

from ctxmodel.model import History

from ._kit import Agent


class V(Agent):
    name = "bug-zero-progress-success"

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
        if new > allowed and removed == 0 and not degraded:
            return self.succeeded(source, prev, prev, 0, tid)
        return super().decide(source, work, prev, new, allowed, removed, degraded, tid)


describe, normalize, effective, request, recover, count = V().ops()
