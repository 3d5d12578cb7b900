"""Anthropic Messages as a dialect: the reference modules the contract is written on, wrapped.

Nothing is re-implemented here: the codec is ``ctxmodel.codec``, the oracle ``ctxmodel.oracle``,
the view ``ctxmodel.render``, the repair ``ctxmodel.repair`` and the count ``ctxmodel.tokens``'s
per-block rule (domain §4.6). The history commands keep their Anthropic-only options (``--raw``,
``--thinking``, the effective history of contract §2) on top of this record.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ctxmodel.codec import dump, dump_message, load
from ctxmodel.dialects import Counted
from ctxmodel.json_types import JsonMessage, JsonMessageView
from ctxmodel.model import History, Message
from ctxmodel.oracle import RULES, Violation, validate

if TYPE_CHECKING:
    from ctxmodel.repair import RepairReport
    from ctxmodel.tokens import Counter

__all__ = ["DIALECT", "Anthropic", "detect"]

#: Block types only the Anthropic format has.
_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "document"})
#: Keys the agents storing this format (Roo-Code, Zoo-Code) put on messages (domain §1.1).
_AGENT_KEYS = ("ts", "condenseId", "condenseParent", "truncationId", "truncationParent", "isSummary",
               "isTruncationMarker")


def detect(value: Any) -> int:
    """How strongly a messages array reads as Anthropic Messages: its block types and agent keys."""
    if not isinstance(value, list):
        return 0
    score = 0
    for message in value:
        if not isinstance(message, dict):
            continue
        score += sum(1 for key in _AGENT_KEYS if key in message)
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind in _BLOCK_TYPES or (kind == "image" and "source" in block):
                    score += 3
    return score


class Anthropic:
    """Anthropic Messages, as the agents store them (``ctxmodel.dialects.Dialect``)."""

    name = "anthropic"
    title = "Anthropic Messages"
    rules = RULES
    has_visibility = True
    normalizes = True

    def detect(self, value: Any) -> int:
        return detect(value)

    def load(self, value: Any) -> History:
        return load(value)

    def dump(self, history: History) -> list[JsonMessage]:
        return dump(history)

    def json_of(self, message: Message) -> JsonMessageView:
        return dump_message(message, copy=False)

    def validate(self, history: History) -> list[Violation]:
        return validate(history)

    def render(self, history: History, *, highlight: Collection[str] = ()) -> str:
        from ctxmodel.render import render

        return render(history, highlight=highlight)

    def repair(self, history: History, *, orphans: str = "to_text") -> tuple[History, RepairReport]:
        from ctxmodel.repair import repair

        return repair(history, orphans=orphans)

    def count(self, history: History, counter: Counter) -> list[Counted]:
        out: list[Counted] = []
        for n, message in enumerate(history):
            if isinstance(message.content, str):
                out.append(Counted(f"messages.{n}.content", "text", counter.raw_text(message.content)))
                continue
            for k, block in enumerate(message.content):
                out.append(Counted(f"messages.{n}.content.{k}", block.type, counter.raw_block(block)))
        return out


DIALECT = Anthropic()
