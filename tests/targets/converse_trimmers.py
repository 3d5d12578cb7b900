"""Trimmers of Bedrock Converse messages (contract §10, §10.1, §10.8, §10.7): legitimate ones that
make other valid choices than the reference and declare them, and broken ones with one bug each, the
witnesses of the properties that must catch them (declared with the property). Each is a
``python:tests.targets.converse_trimmers:Class`` target declaring ``bedrock-converse``.

They read messages with their own helpers, not ``ctxmodel.trimming``, and count with the reference's
Converse count, which their ``count`` op answers with (but for the broken counter).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.trimmers import ReferenceSystemApart

Params = dict[str, Any]
Msg = dict[str, Any]


def _holds(message: Msg, kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and kind in b for b in content)


def _is_prompt(message: Msg) -> bool:
    return message.get("role") == "user" and not _holds(message, "toolResult")


class ReferenceConverse(ReferenceSystemApart):
    """The reference's ``trim`` and ``count`` on Converse messages, as a worker target."""

    name = "trimmer-reference-converse"
    dialect: ClassVar[str] = "bedrock-converse"


class WindowFromAPrompt(ReferenceConverse):
    """The longest suffix that fits and opens on a user prompt (no ``toolResult``): the sliding
    window Strands means to keep, which never starts on results nor on the assistant."""

    name = "trimmer-window-from-a-prompt"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = params.get("maxTokens")
        count = self.measure(params)
        if not isinstance(budget, int) or count(messages) <= budget:
            return {"messages": list(messages)}
        for start in range(1, len(messages)):
            if self.opens_at(messages[start]) and count(messages[start:]) <= budget:
                return {"messages": messages[start:]}
        return {"error": f"nothing fits {budget} tokens"}

    def opens_at(self, message: Any) -> bool:
        """Where the window may start: a user prompt."""
        return _is_prompt(message)


class StripsOldReasoning(ReferenceConverse):
    """Reasoning of earlier turns dropped first, the current turn's kept, then the reference's trim:
    Anthropic's "only the current turn's thinking is needed" (domain §5.8), declared."""

    name = "trimmer-strips-old-reasoning-converse"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = params.get("maxTokens")
        if not isinstance(budget, int) or self.measure(params)(messages) <= budget:
            return {"messages": list(messages)}
        last = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=-1)
        kept = []
        for n, message in enumerate(messages):
            content = message.get("content")
            bare = [b for b in content if not (isinstance(b, dict) and "reasoningContent" in b)] \
                if isinstance(content, list) else content
            kept.append({**message, "content": bare} if n < last and bare else message)
        return ref.op_converse_trim({**params, "messages": kept})


LEGITIMATE: tuple[str, ...] = ("ReferenceConverse", "WindowFromAPrompt", "StripsOldReasoning")


# -- broken: one bug each --------------------------------------------------------------------------


class OpensAnywhere(WindowFromAPrompt):
    """The newest messages that fit, from any message: the window may open on a user message of
    ``toolResult`` blocks whose ``toolUse`` it cut (Bedrock: "The number of toolResult blocks ...
    exceeds the number of toolUse blocks of previous turn") or on the assistant."""

    name = "trimmer-opens-anywhere"

    def opens_at(self, message: Any) -> bool:
        return True


class KeepsTheFirstMessage(WindowFromAPrompt):
    """The task (the first message) pinned, then the window from a prompt: two user messages meet
    where the window opens, which Bedrock refuses ("must alternate between user and assistant")."""

    name = "trimmer-keeps-the-first-message"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        answer = super().trim(params)
        kept = answer.get("messages")
        if not messages or kept is None or not kept or kept[0] is messages[0] or kept == messages:
            return answer
        return {"messages": [messages[0], *kept]}


class DropsReasoningContent(ReferenceConverse):
    """Every ``reasoningContent`` block dropped before trimming, though it declares
    ``trimReasoning=keep``: the thinking a signed tool call needs is gone."""

    name = "trimmer-drops-reasoning-content"

    def trim(self, params: Params) -> Params:
        messages = [{**m, "content": [b for b in m["content"] if "reasoningContent" not in b] or m["content"]}
                    if isinstance(m.get("content"), list) else m for m in params["messages"]]
        return ref.op_converse_trim({**params, "messages": messages})


class LosesSignatures(ReferenceConverse):
    """The reasoning text kept, its ``signature`` dropped (a round trip through a type without it):
    Bedrock refuses the thinking block the model signed."""

    name = "trimmer-loses-signatures"

    def trim(self, params: Params) -> Params:
        def unsigned(block: Any) -> Any:
            said = block.get("reasoningContent") if isinstance(block, dict) else None
            text = said.get("reasoningText") if isinstance(said, dict) else None
            if isinstance(said, dict) and isinstance(text, dict) and "signature" in text:
                return {"reasoningContent": {**said, "reasoningText": {"text": text.get("text", "")}}}
            return block

        messages = [{**m, "content": [unsigned(b) for b in m["content"]]} if isinstance(m.get("content"), list)
                    else m for m in params["messages"]]
        return ref.op_converse_trim({**params, "messages": messages})


class CountsTextBlocksOnly(ReferenceConverse):
    """A count of ``text`` blocks alone: a ``toolUse`` input object (a whole file written) counts
    nothing, so the budget is overrun by what the calls carry."""

    name = "counter-converse-text-only"

    def count(self, params: Params) -> Params:
        texts = [{"role": m.get("role"), "content": [b for b in m.get("content") or [] if "text" in b]}
                 for m in params["messages"] if isinstance(m, dict)]
        return ref.op_converse_count({**params, "messages": texts})
