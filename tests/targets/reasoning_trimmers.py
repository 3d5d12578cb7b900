"""Legitimate trimmers that choose what to do with reasoning (contract §10.8), each a
``python:tests.targets.reasoning_trimmers:Class`` target in both dialects (``...Chat`` classes
declare ``openai-chat``): they trim as the reference does, then keep or strip reasoning as they
declare, and every ``trim`` property must pass on them.

- ``KeepsReasoning``: every message with all its reasoning, declaring ``reasoningRequired=current-turn``
  (keeping everything meets every requirement).
- ``StripsOldReasoning``: ``trimReasoning=strip`` with ``reasoningRequired=no`` (a provider that takes a
  message with or without its reasoning): the reasoning of every assistant message but the answer's
  last one is stripped, as a client that sends back only the latest reasoning does.
- ``StripsBeforeTheLastUser``: ``trimReasoning=strip`` with ``reasoningRequired=current-turn``
  (Anthropic with thinking on, DeepSeek's thinking mode): the reasoning of the assistant messages
  before the last user message is stripped, the current turn's kept (domain §5.8).

They read reasoning with their own helpers (``without_reasoning``), not the properties' yardsticks.
"""

from __future__ import annotations

from typing import ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.trimmers import Msg, Params, Reference

CHAT = "openai-chat"


def without_reasoning(message: Msg, chat: bool) -> Msg:
    """``message`` less its reasoning: Chat without ``reasoning_content``, Anthropic its content less
    its thinking and redacted_thinking blocks; the message itself when it has none, or when stripping
    would leave an Anthropic message empty (an empty message is refused, domain §5.1)."""
    if chat:
        return {k: v for k, v in message.items() if k != "reasoning_content"}
    content = message.get("content")
    if not isinstance(content, list):
        return message
    kept = [b for b in content if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))]
    return {**message, "content": kept} if kept and len(kept) < len(content) else message


class _ThenReasoning(Reference):
    """The reference's trim, then ``reasoned`` applied to its answer."""

    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        return messages

    def trim(self, params: Params) -> Params:
        result = super().trim(params)
        messages = result.get("messages")
        return result if messages is None else {"messages": self.reasoned(list(messages))}


class KeepsReasoning(_ThenReasoning):
    name = "trimmer-keeps-reasoning"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "keep",
                                          "reasoningRequired": "current-turn"}


class KeepsReasoningChat(KeepsReasoning):
    name = "trimmer-keeps-reasoning-chat"
    dialect = CHAT


class StripsOldReasoning(_ThenReasoning):
    name = "trimmer-strips-old-reasoning"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "no"}

    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        return [without_reasoning(m, self.chat) if m.get("role") == "assistant" and i != last else m
                for i, m in enumerate(messages)]


class StripsOldReasoningChat(StripsOldReasoning):
    name = "trimmer-strips-old-reasoning-chat"
    dialect = CHAT


class StripsBeforeTheLastUser(_ThenReasoning):
    name = "trimmer-strips-before-the-last-user"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}

    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        turn = max((i for i, m in enumerate(messages) if self.starts_turn(m)), default=-1)
        return [without_reasoning(m, self.chat) if m.get("role") == "assistant" and i < turn else m
                for i, m in enumerate(messages)]


class StripsBeforeTheLastUserChat(StripsBeforeTheLastUser):
    name = "trimmer-strips-before-the-last-user-chat"
    dialect = CHAT


#: Every legitimate reasoning trimmer, by the class name its spec names.
LEGITIMATE: tuple[str, ...] = (
    "KeepsReasoning", "KeepsReasoningChat", "StripsOldReasoning", "StripsOldReasoningChat",
    "StripsBeforeTheLastUser", "StripsBeforeTheLastUserChat",
)
