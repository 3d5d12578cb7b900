"""The reference trimmer (contract §10): the oldest whole turns dropped until the messages fit.

A request-time trimmer decides what of a history is sent. The reference makes the plainest choice
that holds every clause of §10 in every dialect: it returns the input when it fits; otherwise it
drops whole turns, oldest first (a turn runs from a user prompt to the next one, so a call and all
its results are always dropped together), then the oldest steps of the last turn after its prompt
(an assistant message with the messages answering its calls, or one other message), and stops as
soon as the rest fits. The messages its policies keep (§10 "The floor") are never dropped, so when
they alone fit the answer fits, and when they do not it says so (a controlled error) rather than
returning what does not fit. It cuts no message, moves none and creates none.

It works on the JSON messages of each dialect and counts them with the counter of the target's
declaration (Anthropic: ``ctxmodel.tokens``, system prompt included; Chat Completions:
``ctxmodel.tokens.chat``; Responses: ``ctxmodel.tokens.responses``; Bedrock Converse:
``ctxmodel.tokens.converse``, system prompt included). Converse turns are Anthropic's: a user
message of ``toolResult`` blocks continues its call's turn. Gemini contents (``ctxmodel.tokens.gemini``,
system instruction included) too: a ``model`` role, ``parts``, a user content of ``functionResponse``
parts continuing its call's turn. In Responses a step is a
*unit*: a run of parallel ``function_call`` items with every output answering them (outputs may come
anywhere later), with the ``reasoning`` item before it; or a reasoning item with the item after it;
or one other item. A unit is dropped whole, in whichever turn it starts, so no call loses its output,
no output its call and no reasoning item its item. Pure: the input is never mutated, and the answer
holds copies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ctxmodel import codec
from ctxmodel.errors import HistoryError

__all__ = ["Trimmed", "floor_indices", "is_prompt", "is_system", "steps", "trim", "turns", "units"]

Msg = Mapping[str, Any]

#: The roles a Chat Completions request holds instructions in (contract §10 ``trimSystem``).
SYSTEM_ROLES = frozenset({"system", "developer"})
CHAT = "openai-chat"
RESPONSES = "openai-responses"
#: Bedrock Converse: Anthropic's roles and turns, blocks keyed by kind (``toolUse``, ``toolResult``).
CONVERSE = "bedrock-converse"
#: Gemini contents: a ``model`` role, ``parts`` for content, pairs by ``functionCall`` and ``functionResponse``.
GEMINI = "gemini"


@attrs.frozen
class Trimmed:
    """A trim: the messages kept (copies, in order), or why no answer the policies allow fits."""

    messages: list[dict[str, Any]] | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages} if self.error is None else {"error": self.error}


def _is_message_item(message: Msg) -> bool:
    return bool(message.get("type", "message") == "message")


def is_system(message: Msg, dialect: str) -> bool:
    if dialect == RESPONSES and not _is_message_item(message):
        return False
    return dialect in (CHAT, RESPONSES) and message.get("role") in SYSTEM_ROLES


def is_prompt(message: Msg, dialect: str) -> bool:
    """A user message that starts a turn: in Chat Completions every ``user`` message; in Anthropic
    one that holds no ``tool_result`` (a message of results continues its call's turn)."""
    if message.get("role") != "user":
        return False
    if dialect == RESPONSES:
        return _is_message_item(message)
    if dialect == CHAT:
        return True
    content = message.get("parts" if dialect == GEMINI else "content")
    return not (isinstance(content, list) and any(_is_block(b, "tool_result", dialect) for b in content))


def _is_block(block: Any, kind: str, dialect: str) -> bool:
    """A block of Anthropic ``kind`` (``tool_use``, ``tool_result``): in Converse the block whose key
    is that kind's (``toolUse``, ``toolResult``), in Gemini the part's (``functionCall``,
    ``functionResponse``, either spelling)."""
    if not isinstance(block, Mapping):
        return False
    if dialect == CONVERSE:
        return isinstance(block.get({"tool_use": "toolUse", "tool_result": "toolResult"}[kind]), Mapping)
    if dialect == GEMINI:
        camel, snake = {"tool_use": ("functionCall", "function_call"),
                        "tool_result": ("functionResponse", "function_response")}[kind]
        return isinstance(block.get(camel, block.get(snake)), Mapping)
    return block.get("type") == kind


def _answers(messages: Sequence[Msg], k: int, dialect: str) -> list[int]:
    """The messages after ``k`` that answer its calls: the run of ``tool`` messages (Chat
    Completions), or the next user message when it holds results (Anthropic, Converse)."""
    message = messages[k]
    if message.get("role") != ("model" if dialect == GEMINI else "assistant"):
        return []
    if dialect == CHAT:
        if not message.get("tool_calls"):
            return []
        out = []
        for j in range(k + 1, len(messages)):
            if messages[j].get("role") != "tool":
                break
            out.append(j)
        return out
    content = message.get("parts" if dialect == GEMINI else "content")
    if not (isinstance(content, list) and any(_is_block(b, "tool_use", dialect) for b in content)):
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


def _produced(item: Msg | None) -> bool:
    """An item a reasoning item right before it can have produced (domain §5.7)."""
    if item is None or item.get("type") in ("function_call_output", "reasoning"):
        return False
    return not (_is_message_item(item) and item.get("role") != "assistant")


def units(items: Sequence[Msg]) -> list[list[int]]:
    """The Responses items cut into what is dropped together (see the module), by first index."""
    out: list[list[int]] = []
    taken: set[int] = set()
    k = 0
    while k < len(items):
        if k in taken:
            k += 1
            continue
        unit: list[int] = []
        start = k
        if items[k].get("type") == "reasoning" and k + 1 < len(items) and _produced(items[k + 1]) \
                and k + 1 not in taken:
            unit.append(k)
            start = k + 1
        end = start + 1
        if items[start].get("type") == "function_call":
            while end < len(items) and items[end].get("type") == "function_call" and end not in taken:
                end += 1
        unit.extend(range(start, end))
        calls = {items[i].get("call_id") for i in range(start, end) if items[i].get("type") == "function_call"}
        calls.discard(None)
        unit.extend(j for j in range(end, len(items)) if j not in taken
                    and items[j].get("type") == "function_call_output" and items[j].get("call_id") in calls)
        taken.update(unit)
        out.append(sorted(unit))
        k = end
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
    if dialect not in (CHAT, RESPONSES, CONVERSE, GEMINI):
        return codec.dump(codec.load(messages))
    if not isinstance(messages, list):
        raise HistoryError("messages", f"expected an array of messages, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise HistoryError(f"messages.{i}", "expected a message object")
        if dialect in (CHAT, CONVERSE, GEMINI) and not isinstance(message.get("role"), str):
            raise HistoryError(f"messages.{i}", "expected a message object with a string role")
    copied: list[dict[str, Any]] = codec.copy_json(messages)
    return copied


def _units_plan(history: Sequence[Msg], parts: list[list[int]], head: list[int], floor: set[int]) -> list[list[int]]:
    """The Responses drops, in order: each earlier turn's units (those starting in it), then the last
    turn's units after its prompt, then its prompt; a floor item is a unit of its own, never dropped."""
    first_turn = {i: t for t, turn in enumerate(parts) for i in turn}
    by_turn: list[list[list[int]]] = [[] for _ in parts]
    for unit in units(history):
        by_turn[first_turn[unit[0]]].append([i for i in unit if i not in floor])
    plan = [[i for unit in group for i in unit] for group in by_turn[:-1]]
    plan += [unit for unit in by_turn[-1] if unit != head]
    plan += [[i for i in head if i not in floor]]
    return plan


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
    last = parts[-1]
    head = [last[0]] if is_prompt(history[last[0]], dialect) else []
    if dialect == RESPONSES:
        plan = _units_plan(history, parts, head, floor)
    else:
        plan = [[i for i in turn if i not in floor] for turn in parts[:-1]]
        plan += [[i for i in step if i not in floor]
                 for step in steps(history, [i for i in last if i not in head], dialect)]
        plan += [[i for i in head if i not in floor]]
    for drop in plan:
        if not drop or len(drop) == len(kept):
            continue
        kept -= set(drop)
        out = [history[i] for i in sorted(kept)]
        if dialect in (CONVERSE, GEMINI) and out[0].get("role") != "user" and history[0].get("role") == "user":
            continue  # Bedrock refuses a request that does not open with the user (domain §5.10), and a
            # Gemini call turn must follow a user turn (domain §5.9)
        if count(out) <= max_tokens:
            return Trimmed(out)
    floor_tokens = count([history[i] for i in sorted(floor)])
    return Trimmed(None, f"cannot trim to {max_tokens} tokens: the messages the policies keep count {floor_tokens}")
