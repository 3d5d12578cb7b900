"""The reference trimmer (contract §10): the oldest whole turns dropped until the messages fit.

A request-time trimmer decides what of a history is sent. The reference makes the plainest choice
that holds every clause of §10 in both dialects: it returns the input when it fits; otherwise it
drops whole turns, oldest first (a turn runs from a user prompt to the next one, so a call and all
its results are always dropped together), then the oldest steps of the last turn after its prompt
(an assistant message with the messages answering its calls, or one other message), and stops as
soon as the rest fits. The messages its policies keep (§10 "The floor") are never dropped, so when
they alone fit the answer fits, and when they do not it says so (a controlled error) rather than
returning what does not fit. It cuts no message, moves none and creates none.

It works on the JSON messages of either dialect and counts them with the counter of the target's
declaration (Anthropic: ``ctxmodel.tokens``, system prompt included; Chat Completions:
``ctxmodel.tokens.chat``). Pure: the input is never mutated, and the answer holds copies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ctxmodel import codec
from ctxmodel.errors import HistoryError

__all__ = ["Trimmed", "floor_indices", "is_prompt", "is_system", "steps", "trim", "turns"]

Msg = Mapping[str, Any]

#: The roles a Chat Completions request holds instructions in (contract §10 ``trimSystem``).
SYSTEM_ROLES = frozenset({"system", "developer"})


@attrs.frozen
class Trimmed:
    """A trim: the messages kept (copies, in order), or why no answer the policies allow fits."""

    messages: list[dict[str, Any]] | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages} if self.error is None else {"error": self.error}


def is_system(message: Msg, dialect: str) -> bool:
    return dialect == "openai-chat" and message.get("role") in SYSTEM_ROLES


def is_prompt(message: Msg, dialect: str) -> bool:
    """A user message that starts a turn: in Chat Completions every ``user`` message; in Anthropic
    one that holds no ``tool_result`` (a message of results continues its call's turn)."""
    if message.get("role") != "user":
        return False
    if dialect == "openai-chat":
        return True
    content = message.get("content")
    return not (isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content))


def _answers(messages: Sequence[Msg], k: int, dialect: str) -> list[int]:
    """The messages after ``k`` that answer its calls: the run of ``tool`` messages (Chat
    Completions), or the next user message when it holds results (Anthropic)."""
    message = messages[k]
    if message.get("role") != "assistant":
        return []
    if dialect == "openai-chat":
        if not message.get("tool_calls"):
            return []
        out = []
        for j in range(k + 1, len(messages)):
            if messages[j].get("role") != "tool":
                break
            out.append(j)
        return out
    content = message.get("content")
    if not (isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in content)):
        return []
    if k + 1 < len(messages) and messages[k + 1].get("role") == "user" and not is_prompt(messages[k + 1], dialect):
        return [k + 1]
    return []


def steps(messages: Sequence[Msg], indices: Sequence[int], dialect: str) -> list[list[int]]:
    """``indices`` (consecutive) cut into what is dropped together: a call with its answers, or one message."""
    out: list[list[int]] = []
    wanted = set(indices)
    i = 0
    order = list(indices)
    while i < len(order):
        k = order[i]
        group = [k, *(j for j in _answers(messages, k, dialect) if j in wanted)]
        out.append(group)
        i += len(group)
    return out


def turns(messages: Sequence[Msg], dialect: str) -> list[list[int]]:
    """The indices cut at each prompt; what precedes the first prompt is a turn of its own."""
    out: list[list[int]] = []
    for i, message in enumerate(messages):
        if not out or is_prompt(message, dialect):
            out.append([])
        out[-1].append(i)
    return out


def floor_indices(messages: Sequence[Msg], dialect: str, policies: Mapping[str, str]) -> list[int]:
    """The messages the policies keep (contract §10 "The floor"), by index."""
    keep: set[int] = set()
    system = policies.get("trimSystem", "keep")
    if system == "keep":
        keep |= {i for i, m in enumerate(messages) if is_system(m, dialect)}
    elif system == "first" and messages and is_system(messages[0], dialect):
        keep.add(0)
    if policies.get("trimLastUser", "keep") == "keep":
        prompts = [i for i, m in enumerate(messages) if is_prompt(m, dialect)]
        keep |= set(prompts[-1:])
    return sorted(keep)


def _checked(messages: Any, dialect: str) -> list[dict[str, Any]]:
    if dialect != "openai-chat":
        return codec.dump(codec.load(messages))
    if not isinstance(messages, list):
        raise HistoryError("messages", f"expected an array of messages, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise HistoryError(f"messages.{i}", "expected a message object with a string role")
    copied: list[dict[str, Any]] = codec.copy_json(messages)
    return copied


def trim(
    messages: Any,
    *,
    dialect: str,
    max_tokens: int | None,
    count: Callable[[list[dict[str, Any]]], int],
    policies: Mapping[str, str] | None = None,
) -> Trimmed:
    """Contract §10 for ``messages`` in ``dialect``: ``count`` measures a list of messages as the
    budget does (in Anthropic with the system prompt). No budget (``trimBudget=none``): the input."""
    history = _checked(messages, dialect)
    chosen = dict(policies or {})
    if max_tokens is None or count(history) <= max_tokens:
        return Trimmed(history)
    floor = set(floor_indices(history, dialect, chosen))
    kept = set(range(len(history)))
    parts = turns(history, dialect)
    plan: list[list[int]] = [[i for i in turn if i not in floor] for turn in parts[:-1]]
    last = parts[-1]
    head = [last[0]] if is_prompt(history[last[0]], dialect) else []
    plan += [[i for i in step if i not in floor]
             for step in steps(history, [i for i in last if i not in head], dialect)]
    plan += [[i for i in head if i not in floor]]
    for drop in plan:
        if not drop or len(drop) == len(kept):
            continue
        kept -= set(drop)
        out = [history[i] for i in sorted(kept)]
        if count(out) <= max_tokens:
            return Trimmed(out)
    floor_tokens = count([history[i] for i in sorted(floor)])
    return Trimmed(None, f"cannot trim to {max_tokens} tokens: the messages the policies keep count {floor_tokens}")
