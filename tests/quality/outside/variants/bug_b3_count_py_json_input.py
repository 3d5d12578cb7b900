"""The ``tool_use`` input is serialized for counting with Python's ``json.dumps`` (compact separators,
no ASCII escaping) instead of JavaScript's ``JSON.stringify``: the same text for strings and integers,
but ``2.0`` stays ``2.0`` (JS prints ``2``), ``1e-07`` is not ``1e-7``, integer-like keys keep their
place, so inputs with float-typed numbers (as Gemini sends them) count differently.

Breaks: contract §5 (the ``tool_use`` input serialized as ``JSON.stringify(JSON.parse(json))``; a
target's ``count`` gives the harness's figure).
Code path: counting (``count``).
"""

import json
from typing import Any

from ._kit import Agent, ToolUse


class V(Agent):
    name = "bug-b3-count-py-json-input"

    def count(self, params: dict[str, Any]) -> dict[str, Any]:
        system_prompt = params.get("systemPrompt", "")
        if not isinstance(system_prompt, str):
            raise ValueError("params.systemPrompt: expected a string")
        c = self.counter
        raw = 0
        for message in self.load(params):
            for block in message.blocks:
                if isinstance(block, ToolUse):
                    arguments = json.dumps(block.input, separators=(",", ":"), ensure_ascii=False)
                    raw += c.raw_text(f"Tool: {block.name}\nArguments: {arguments}")
                else:
                    raw += c.raw_block(block)
        return {"tokens": c.count_text(system_prompt) + c.fudged(raw)}


describe, normalize, effective, request, recover, count = V().ops()
