"""Strands Agents' conversation managers (``strands.agent.conversation_manager``) as ``trim`` targets
in ``bedrock-converse``.

Run in this directory's environment (``python examples/targets/install.py strands``)::

    ctxmodel check --target exec:"examples/targets/strands/.venv/bin/python examples/targets/strands/target.py CONFIG"

``--list`` prints the configurations. Each one puts a copy of the history in an agent's
``messages`` (Strands' messages are Converse messages, plain dicts) and calls the manager's
``apply_management(agent)``, which an agent runs after every event loop cycle: what is left in
``agent.messages`` is what the next request sends, which is what contract §10 calls a trimmer. The
manager edits the list in place, by design; the adapter hands it a copy, so the caller's history
is never touched.

``SlidingWindowConversationManager`` keeps a number of messages, not tokens, so each configuration
runs with a fixed window and declares ``trimBudget=none`` (as AutoGen's buffered context does):
reading ``maxTokens`` as a message count would make "fits" mean "at most N messages". With
``pin_first`` the manager marks the first messages with ``metadata.custom.pinned``, which its Bedrock
model drops when it formats the request (``BedrockModel._format_bedrock_messages`` keeps ``role``
and ``content`` only), so the adapter takes that key off again: the answer is what is sent.

``count`` is Strands' own estimate, ``Model.count_tokens`` (``BedrockModel`` without the Bedrock
``CountTokens`` API, so no network: tiktoken's ``cl100k_base`` when installed, which it is not here,
else characters / 4 for text and / 2 for JSON), the count its proactive compression reads.
"""

# ruff: noqa: E402  (the --list answer comes before the imports it guards)
from __future__ import annotations

import sys

#: The configurations, printed by ``--list`` before anything is imported.
NAMES = ("sliding-window-4", "sliding-window-10", "sliding-window-4-pin-first-1")
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import asyncio
import copy
import logging
import types
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from ctxmodel_target import serve
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.models.bedrock import BedrockModel

Msg = dict[str, Any]

logging.disable(logging.WARNING)  # the manager logs every window it cannot trim, on stderr


@dataclass(frozen=True)
class Config:
    name: str
    manager: Callable[[], SlidingWindowConversationManager]


#: The window keeps the newest messages from a user message it may start on: it may drop the last
#: user message (a turn longer than the window) and there are no system messages in Converse.
POLICIES = {"trimBudget": "none", "trimSystem": "any", "trimLastUser": "any"}

CONFIGS: dict[str, Config] = {c.name: c for c in (
    Config("sliding-window-4", lambda: SlidingWindowConversationManager(window_size=4)),
    Config("sliding-window-10", lambda: SlidingWindowConversationManager(window_size=10)),
    Config("sliding-window-4-pin-first-1", lambda: SlidingWindowConversationManager(window_size=4, pin_first=1)),
)}
assert tuple(CONFIGS) == NAMES

_model = BedrockModel(region_name="us-east-1")


def _sent(message: Msg) -> Msg:
    """The message as the request carries it: the manager's pin marker off again."""
    return {k: v for k, v in message.items() if k != "metadata"} if "metadata" in message else message


def trim_op(config: Config) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def trim(params: dict[str, Any]) -> dict[str, Any]:
        agent = types.SimpleNamespace(messages=copy.deepcopy(params["messages"]))
        config.manager().apply_management(agent)  # type: ignore[arg-type]
        return {"messages": [_sent(m) for m in agent.messages]}

    return trim


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    """No conversion to undo: Strands' messages are the Converse dicts themselves."""
    return {"messages": [_sent(m) for m in copy.deepcopy(params["messages"])]}


def count(params: dict[str, Any]) -> dict[str, Any]:
    system = params.get("systemPrompt")
    tokens = asyncio.run(_model.count_tokens(copy.deepcopy(params["messages"]),
                                             system_prompt=system if isinstance(system, str) else None))
    return {"tokens": tokens}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CONFIGS:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    config = CONFIGS[argv[0]]
    serve(
        name=f"strands-agents {config.name}",
        version=metadata.version("strands-agents"),
        dialect="bedrock-converse",
        policies=POLICIES,
        ops={"trim": trim_op(config), "count": count, "roundtrip": roundtrip},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
