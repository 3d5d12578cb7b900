"""The ``count`` op caches its answer keyed on the system prompt, the number of messages and the last
message's ``ts`` (the history "only grows"), so a different history with the same key gets a stale figure.

Breaks: contract §5 (``count`` gives the harness's figure on every input) and §1 (what a target returns
never depends on state left by earlier requests).
Code path: the token count (``count``).
"""

from typing import Any

from ._kit import Agent


class V(Agent):
    name = "bug-b2-count-cache-by-ts"

    def __init__(self) -> None:
        super().__init__()
        self.cache: dict[tuple[Any, int, str | None], dict[str, Any]] = {}

    def count(self, params: dict[str, Any]) -> dict[str, Any]:
        messages = params.get("messages")
        last = messages[-1] if isinstance(messages, list) and messages else None
        key = (
            params.get("systemPrompt", ""),
            len(messages) if isinstance(messages, list) else -1,
            repr(last.get("ts")) if isinstance(last, dict) else None,
        )
        if key not in self.cache:
            self.cache[key] = super().count(params)
        return self.cache[key]


describe, normalize, effective, request, recover, count = V().ops()
