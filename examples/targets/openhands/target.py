"""The OpenHands SDK's summarizing condenser and the view it sends (``openhands.sdk.context``) as
``trim`` targets in ``openai-chat``.

Run in this directory's environment (``python examples/targets/install.py openhands``; the SDK
needs Python 3.12)::

    ctxmodel check --target exec:"examples/targets/openhands/.venv/bin/python \
      examples/targets/openhands/target.py gpt-4o"

``--list`` prints the configurations. OpenHands keeps a conversation as events, and before every
model call its agent builds the request from them (``agent/utils.py`` ``prepare_llm_messages``):
``View.from_events`` applies the condensations already made and drops what breaks its properties
(an action without its observation, an observation without its action, a second observation of
one call, part of a batch of parallel calls); the condenser may answer a new ``Condensation``
instead of the view, which the agent appends to its events before it steps again; then
``events_to_messages`` and ``LLM.format_messages_for_llm`` give the Chat Completions messages. The
adapter runs that loop to its end, as the agent's steps would: what it sends is what contract §10
calls a trimmer.

Each message of the history becomes the events OpenHands stores for it: the first system
(or developer) message its ``SystemPromptEvent`` (no tools: the request's tools are apart, as
Chat's are), a later one a system ``MessageEvent`` from the environment, a user message the user's
``MessageEvent``, an assistant message with calls one ``ActionEvent`` per call sharing one response
id (its text and reasoning on the first, as the SDK records a batch), an assistant answer the
agent's ``MessageEvent``, a ``tool`` message an ``ObservationEvent`` of the action of its call.
The summary is written by a stub ``LLM`` (``generate`` answers one fixed text): no network.

A sent message equal to the one OpenHands renders from that input message alone comes back as the
caller's own dict (its serializer turns a string content into parts, and drops keys the API does
not read, so equality of dicts would call every message changed); one it built (a summary, two
messages joined) comes back as OpenHands sends it.
"""

# ruff: noqa: E402  (the --list answer comes before the imports it guards)
from __future__ import annotations

import sys

#: The configurations, printed by ``--list`` before anything is imported.
NAMES = ("gpt-4o", "deepseek-reasoner")
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import logging
import os
from importlib import metadata
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else litellm reads its cost map from the network
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

from ctxmodel_target import serve  # before the SDK: the kit takes stdout, so nothing it prints reaches it
from litellm import ModelResponse
from openhands.sdk.context.condenser import LLMSummarizingCondenser
from openhands.sdk.context.condenser.base import NoCondensationAvailableException
from openhands.sdk.context.view import View
from openhands.sdk.event import (
    ActionEvent,
    Condensation,
    Event,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
)
from openhands.sdk.llm import LLM, ImageContent, LLMResponse, Message, MessageToolCall, TextContent
from openhands.sdk.tool import Observation

Msg = dict[str, Any]

logging.disable(logging.WARNING)  # the view logs every property it enforces, on stderr

#: The models: one the SDK sends as Chat Completions with parts, and the one of its
#: ``SEND_REASONING_CONTENT_MODELS`` the field meets most, which sends ``reasoning_content`` back.
MODELS = {"gpt-4o": "gpt-4o", "deepseek-reasoner": "deepseek/deepseek-reasoner"}

#: What the SDK's own defaults are (``default_condenser``: ``max_size=80``, ``keep_first=4``), with
#: the budget as ``max_tokens``.
MAX_SIZE, KEEP_FIRST = 80, 4

#: The agent appends one condensation per step; a view still over the budget after this many is
#: one the condenser cannot bring under it.
MAX_CONDENSATIONS = 12

#: From the source: the view drops every action its observation does not answer and the reverse
#: (``ToolCallMatchingProperty``), and a batch of parallel calls whole (``BatchAtomicityProperty``):
#: ``trimToolCalls=pairs``. A condensation puts one summary (a user message) where the events it
#: forgot were: ``trimPlaceholder=one``. It never forgets the leading system prompt
#: (``_leading_system_prompt_index``), but forgets later system messages and the last user message
#: like any event: ``trimSystem=first``, ``trimLastUser=any``. It keeps the first ``keep_first``
#: events and the newest that fit: neither end is kept whole, ``trimKeep=any``. And
#: ``events_to_messages`` sends neighbouring plain user messages as one (``_can_merge_user_messages``):
#: ``mergeUsers=yes``.
POLICIES: dict[str, str] = {"trimToolCalls": "pairs", "trimPlaceholder": "one", "trimSystem": "first",
                            "trimLastUser": "any", "trimKeep": "any", "mergeUsers": "yes"}

SUMMARY = "Summary of the earlier conversation."


class ToolText(Observation):
    """A tool's result as the SDK's observations carry it: its content parts."""


class SummaryLLM(LLM):
    """The condenser's summarizer, answering one fixed summary without calling a model."""

    def generate(self, messages: list[Message], *args: Any, **kwargs: Any) -> LLMResponse:  # type: ignore[override]
        return LLMResponse(message=Message(role="assistant", content=[TextContent(text=SUMMARY)]),
                           metrics=self.metrics.get_snapshot(), raw_response=ModelResponse())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def _parts(content: Any) -> list[TextContent | ImageContent]:
    if isinstance(content, str):
        return [TextContent(text=content)]
    out: list[TextContent | ImageContent] = []
    for part in content or []:
        if part.get("type") == "image_url":
            out.append(ImageContent(image_urls=[part["image_url"]["url"]]))
        else:
            out.append(TextContent(text=part.get("text", "")))
    return out


def to_events(messages: list[Msg]) -> list[list[LLMConvertibleEvent]]:
    """The events OpenHands stores for each message, message by message."""
    out: list[list[LLMConvertibleEvent]] = []
    actions: dict[str, ActionEvent] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        events: list[LLMConvertibleEvent] = []
        if role in ("system", "developer") and index == 0:
            events.append(SystemPromptEvent(system_prompt=TextContent(text=_text(message.get("content"))), tools=[]))
        elif role in ("system", "developer"):
            events.append(MessageEvent(source="environment",
                                       llm_message=Message(role="system", content=_parts(message.get("content")))))
        elif role == "user":
            events.append(MessageEvent(source="user",
                                       llm_message=Message(role="user", content=_parts(message.get("content")))))
        elif role == "assistant" and message.get("tool_calls"):
            response = f"response-{index}"
            for k, call in enumerate(message["tool_calls"]):
                function = call.get("function", {})
                action = ActionEvent(
                    thought=_parts(message.get("content")) if k == 0 and message.get("content") else [],
                    reasoning_content=(message.get("reasoning_content") or None) if k == 0 else None,
                    tool_name=function.get("name", ""), tool_call_id=call["id"], llm_response_id=response,
                    tool_call=MessageToolCall(id=call["id"], name=function.get("name", ""),
                                              arguments=function.get("arguments", ""), origin="completion"))
                actions.setdefault(call["id"], action)
                events.append(action)
        elif role == "assistant":
            events.append(MessageEvent(source="agent", llm_message=Message(
                role="assistant", content=_parts(message.get("content")),
                reasoning_content=message.get("reasoning_content") or None)))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            action = actions.get(call_id)
            events.append(ObservationEvent(
                observation=ToolText(content=_parts(message.get("content"))),
                action_id=action.id if action is not None else f"no-action-{index}",
                tool_name=action.tool_name if action is not None else str(message.get("name", "")),
                tool_call_id=call_id))
        else:
            raise ValueError(f"messages[{index}]: role {role!r} is not one OpenHands stores")
        out.append(events)
    return out


class Config:
    def __init__(self, model: str) -> None:
        self.agent_llm = LLM(model=model, usage_id="agent")
        self.summary_llm = SummaryLLM(model=model, usage_id="condenser")

    def render(self, events: list[LLMConvertibleEvent]) -> list[Msg]:
        messages = LLMConvertibleEvent.events_to_messages(list(events))
        return self.agent_llm.format_messages_for_llm(messages)

    def tokens(self, events: list[LLMConvertibleEvent]) -> int:
        return self.agent_llm.get_token_count(LLMConvertibleEvent.events_to_messages(list(events)))

    def own(self, per_message: list[list[LLMConvertibleEvent]]) -> list[list[Msg]]:
        """What OpenHands renders from each input message alone."""
        return [self.render(events) for events in per_message]

    def back(self, sent: list[Msg], messages: list[Msg], own: list[list[Msg]]) -> list[Msg]:
        """Each sent message as the caller's dict whose own rendering it is (the earliest not used
        yet, in order), else as OpenHands sends it."""
        out: list[Msg] = []
        start = 0
        for message in sent:
            match = next((i for i in range(start, len(messages)) if own[i] == [message]), None)
            if match is None:
                out.append(message)
            else:
                out.append(messages[match])
                start = match + 1
        return out

    def trim(self, params: dict[str, Any]) -> dict[str, Any]:
        messages: list[Msg] = params["messages"]
        per_message = to_events(messages)
        condenser = LLMSummarizingCondenser(llm=self.summary_llm, max_size=MAX_SIZE, keep_first=KEEP_FIRST,
                                            max_tokens=int(params["maxTokens"]))
        log: list[Event] = [e for events in per_message for e in events]
        for _ in range(MAX_CONDENSATIONS):
            try:
                result = condenser.condense(View.from_events(log), agent_llm=self.agent_llm)
            except NoCondensationAvailableException as exc:
                return {"error": f"openhands could not condense the view: {exc}"}
            if isinstance(result, Condensation):
                log.append(result)
                continue
            return {"messages": self.back(self.render(result.events), messages, self.own(per_message))}
        return {"error": f"openhands' condenser answered a new condensation {MAX_CONDENSATIONS} times in a row "
                         "(the agent would go on condensing, one per step, and never send)"}

    def count(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": self.tokens([e for events in to_events(params["messages"]) for e in events])}

    def roundtrip(self, params: dict[str, Any]) -> dict[str, Any]:
        """The conversion around OpenHands without its view or condenser: each message rendered alone."""
        messages: list[Msg] = params["messages"]
        per_message = to_events(messages)
        own = self.own(per_message)
        return {"messages": self.back([m for rendered in own for m in rendered], messages, own)}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in MODELS:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(NAMES)}", file=sys.stderr)
        return 2
    config = Config(MODELS[argv[0]])
    serve(
        name=f"openhands-sdk LLMSummarizingCondenser ({MODELS[argv[0]]})",
        version=metadata.version("openhands-sdk"),
        dialect="openai-chat",
        policies=POLICIES,
        ops={"trim": config.trim, "count": config.count, "roundtrip": config.roundtrip},
        describe={"ops": ["count", "trim"]},
    )
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
