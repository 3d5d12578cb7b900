"""Broken trimmers of reasoning (contract §10.8), one bug each
(``python:tests.targets.broken_reasoning:Class``), named for what they do wrong; each is a witness of
``trim.reasoning-travels`` with the code it must produce (declared with the property, run by
``tests/quality/test_witnesses.py``). Each trims as the reference does and then mishandles the
reasoning of its answer, as the field's bugs do (domain §5.8); ``...Chat`` ones declare ``openai-chat``.
"""

from __future__ import annotations

from typing import ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.reasoning_trimmers import CHAT, _ThenReasoning, without_reasoning
from tests.targets.trimmers import Msg


class DropsSignatures(_ThenReasoning):
    """Rebuilds each thinking block from its text, as a client that keeps only what it displayed:
    the signature is lost (the API refuses the block: "Invalid `signature`")."""

    name = "broken-drops-signatures"

    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        out = []
        for message in messages:
            content = message.get("content")
            if isinstance(content, list):
                content = [{"type": "thinking", "thinking": b.get("thinking", "")}
                           if isinstance(b, dict) and b.get("type") == "thinking" else b for b in content]
                message = {**message, "content": content}
            out.append(message)
        return out


class CutsLongReasoningChat(_ThenReasoning):
    """Cuts every ``reasoning_content`` to its first 200 characters, as if it counted toward the budget."""

    name = "broken-cuts-long-reasoning-chat"
    dialect = CHAT

    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        return [{**m, "reasoning_content": m["reasoning_content"][:200]}
                if isinstance(m.get("reasoning_content"), str) else m for m in messages]


class _StripsAll(_ThenReasoning):
    def reasoned(self, messages: list[Msg]) -> list[Msg]:
        return [without_reasoning(m, self.chat) if m.get("role") == "assistant" else m for m in messages]


class StripsThinking(_StripsAll):
    """Drops every thinking and redacted_thinking block to save tokens, declaring the default
    ``trimReasoning=keep``."""

    name = "broken-strips-thinking"


class StripsReasoningChat(_StripsAll):
    """Drops ``reasoning_content`` from every message (a conversion that does not know the key),
    declaring the default ``trimReasoning=keep``."""

    name = "broken-strips-reasoning-chat"
    dialect = CHAT


class StripsTheCurrentTurn(_StripsAll):
    """Strips reasoning from every assistant message, the current turn's too, while declaring that its
    provider requires the current turn's (``reasoningRequired=current-turn``)."""

    name = "broken-strips-the-current-turn"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}


class StripsTheCurrentTurnChat(StripsTheCurrentTurn):
    name = "broken-strips-the-current-turn-chat"
    dialect = CHAT
