"""Two bugs that break one rule (contract §10.3, a trimmed request within its budget) by two causes,
as LiteLLM's ``trim_messages`` does: where nothing fits it sends what its policies keep anyway
instead of the controlled error, and it sets trailing ``tool`` messages aside, trims the rest and
puts them back uncounted. ``trim.fits`` tells the causes apart (``error-expected``: the floor
alone is over budget; ``over-budget``: the floor fits and the answer does not), so each has a
fixture of its own, and a baseline holding the first still fails on the second.
"""

from __future__ import annotations

from typing import ClassVar

from tests.targets.trimmers import Msg, Params, Reference


class FloorAndTrailingResults(Reference):
    name = "broken-floor-and-trailing-results"
    dialect: ClassVar[str] = "openai-chat"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        cut = len(messages)
        while cut and messages[cut - 1].get("role") == "tool":
            cut -= 1
        rest = super().trim({**params, "messages": messages[:cut]}) if cut else {"messages": []}
        if "messages" not in rest:
            users = [i for i, m in enumerate(messages) if m.get("role") == "user"][-1:]
            return {"messages": [m for i, m in enumerate(messages) if self.is_system(m) or i in users]}
        return {"messages": [*rest["messages"], *messages[cut:]]}
