"""The yardsticks of ``trim`` on Bedrock Converse messages (contract §10.1, §10.8), restated from the contract.

Read from domain §5.10's rules and the contract's words, not from the dialect module that judges
files (``ctxmodel.dialects.bedrock_converse``) nor from the reference trimmer (``ctxmodel.trimming``):
a judge that shared their reading would be blind to their bugs.

A Converse block has no ``type``: its kind is its key (``text``, ``toolUse``, ``toolResult``,
``reasoningContent``, ``cachePoint``...). Pairing (§10.1) is counted by rule and id, so an answer is
compared with its input: a ``toolUse`` the next message does not answer with a ``toolResult`` of its
id (or answers twice), a ``toolResult`` whose id the message before did not call. Bedrock also
refuses a request whose first message is not the user's and one where two messages of a role meet
(domain §5.10): those are counted too (by rule, with no id), so that a trimmer that leaves either
where its input had none is caught.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CONVERSE", "ROLE_RULES", "block_kind", "call_ids", "converse_pairing_violations", "holds_results"]

Msg = Mapping[str, Any]

#: The Bedrock Converse dialect's name (contract §7 ``dialect``).
CONVERSE = "bedrock-converse"

#: The rules counted by rule alone: where the roles stand, not how calls pair (their own finding code).
ROLE_RULES = frozenset({"first-message-user", "roles-alternate"})

#: The block kinds a Converse message holds (domain §5.10), in the order a block is read by.
_KINDS = ("text", "image", "document", "video", "toolUse", "toolResult", "reasoningContent", "cachePoint",
          "guardContent", "citationsContent")


def block_kind(block: Any) -> str | None:
    """The kind a Converse block is (its key), or None for what is no block."""
    if not isinstance(block, Mapping):
        return None
    return next((k for k in _KINDS if k in block), None)


def _blocks(message: Msg) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _ids(message: Msg, kind: str) -> list[str]:
    return [str(b[kind].get("toolUseId")) for b in _blocks(message)
            if block_kind(b) == kind and isinstance(b[kind], Mapping)]


def call_ids(message: Msg) -> list[str]:
    """The ``toolUseId`` of each ``toolUse`` an assistant message makes."""
    return _ids(message, "toolUse") if message.get("role") == "assistant" else []


def holds_results(message: Msg) -> bool:
    """A user message that answers calls (it holds a ``toolResult``): it continues its call's turn."""
    return any(block_kind(b) == "toolResult" for b in _blocks(message))


def converse_pairing_violations(messages: Sequence[Msg]) -> Counter[tuple[str, str]]:
    """Domain §5.10's rules read off one request, by rule and id (the role rules by rule alone). A
    last assistant message's calls are pending, not missing."""
    out: Counter[tuple[str, str]] = Counter()
    if messages and messages[0].get("role") != "user":
        out[("first-message-user", "")] += 1
    for k, message in enumerate(messages):
        if k and message.get("role") == messages[k - 1].get("role"):
            out[("roles-alternate", "")] += 1
        if message.get("role") == "assistant" and k + 1 < len(messages):
            nxt = messages[k + 1]
            answered = Counter(_ids(nxt, "toolResult")) if nxt.get("role") == "user" else Counter()
            for tool_id in dict.fromkeys(call_ids(message)):
                if not answered[tool_id]:
                    out[("missing-tool-result", tool_id)] += 1
                elif answered[tool_id] > 1:
                    out[("duplicate-tool-result", tool_id)] += answered[tool_id] - 1
        if message.get("role") == "user":
            called = set(call_ids(messages[k - 1])) if k else set()
            for tool_id in _ids(message, "toolResult"):
                if tool_id not in called:
                    out[("excess-tool-results", tool_id)] += 1
    return out
