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
NAMES = ("sliding-window-4", "sliding-window-10", "sliding-window-4-pin-first-1", "summarizing-recent-2")
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
from strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager
from strands.models.bedrock import BedrockModel
from strands.models.model import Model
from strands.types.exceptions import ContextWindowOverflowException

Msg = dict[str, Any]

logging.disable(logging.WARNING)  # the manager logs every window it cannot trim, on stderr


@dataclass(frozen=True)
class Config:
    name: str
    manager: Callable[[], Any]
    policies: dict[str, str]
    #: On a context overflow, as the agent loop runs it: reduce, retry, until the model takes it.
    on_overflow: bool = False


#: The window keeps the newest messages from a user message it may start on: it may drop the last
#: user message (a turn longer than the window) and there are no system messages in Converse.
POLICIES = {"trimBudget": "none", "trimSystem": "any", "trimLastUser": "any"}

#: The summary stands where the messages it summarizes were: a user text (``as_user_summary``), the
#: placeholder of contract §10; what it keeps is the newest messages, from a split that breaks no pair.
SUMMARY_POLICIES = {"trimSystem": "any", "trimLastUser": "any", "trimPlaceholder": "one"}

CONFIGS: dict[str, Config] = {c.name: c for c in (
    Config("sliding-window-4", lambda: SlidingWindowConversationManager(window_size=4), POLICIES),
    Config("sliding-window-10", lambda: SlidingWindowConversationManager(window_size=10), POLICIES),
    Config("sliding-window-4-pin-first-1", lambda: SlidingWindowConversationManager(window_size=4, pin_first=1),
           POLICIES),
    Config("summarizing-recent-2", lambda: SummarizingConversationManager(preserve_recent_messages=2),
           SUMMARY_POLICIES, on_overflow=True),
)}
assert tuple(CONFIGS) == NAMES

_model = BedrockModel(region_name="us-east-1")


class SummaryModel(Model):
    """The model a summary is asked of, stubbed: no network, one fixed summary, streamed as Bedrock
    streams (``messageStart``, a text delta, ``messageStop``), so Strands' own stream processing
    builds the message."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": "Summary of the earlier conversation."}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def _tokens(messages: list[Msg], system: Any) -> int:
    return int(asyncio.run(_model.count_tokens(copy.deepcopy(messages),
                                               system_prompt=system if isinstance(system, str) else None)))


#: Keys Strands puts on a message it stores that its Bedrock model does not send (it sends ``role``
#: and ``content``): the pin marker, and the tracking id a summary message is given.
_NOT_SENT = ("metadata", "tracking_id")


def _sent(message: Msg) -> Msg:
    """The message as the request carries it: the keys the manager added taken off again."""
    return {k: v for k, v in message.items() if k not in _NOT_SENT} if any(k in message for k in _NOT_SENT) \
        else message


def trim_op(config: Config) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def trim(params: dict[str, Any]) -> dict[str, Any]:
        manager = config.manager()
        agent = types.SimpleNamespace(messages=copy.deepcopy(params["messages"]), aux_model=SummaryModel())
        if not config.on_overflow:
            manager.apply_management(agent)
            return {"messages": [_sent(m) for m in agent.messages]}
        budget = int(params["maxTokens"])
        for _ in range(len(agent.messages) + 1):
            if _tokens(agent.messages, params.get("systemPrompt")) <= budget:
                return {"messages": [_sent(m) for m in agent.messages]}
            try:
                manager.reduce_context(agent, e=ContextWindowOverflowException("over the window"))
            except ContextWindowOverflowException as exc:
                return {"error": f"strands could not reduce the context: {exc}"}
        return {"error": "strands could not reduce the context within one pass per message"}

    return trim


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    """No conversion to undo: Strands' messages are the Converse dicts themselves."""
    return {"messages": [_sent(m) for m in copy.deepcopy(params["messages"])]}


def count(params: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": _tokens(params["messages"], params.get("systemPrompt"))}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CONFIGS:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    config = CONFIGS[argv[0]]
    serve(
        name=f"strands-agents {config.name}",
        version=metadata.version("strands-agents"),
        dialect="bedrock-converse",
        policies=config.policies,
        ops={"trim": trim_op(config), "count": count, "roundtrip": roundtrip},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
