"""The input spaces a target declares with ``inputs`` (contract §7): ``agent-stored``, histories a
correct agent stores, and ``untagged``, histories without Roo's visibility keys.

An agent's ops are called on what its Task has stored, never on arbitrary JSON, and the Task
prevents some shapes before anything is stored (domain §1, §2, §3.3, §4): a model's repeated
``tool_use`` id within one message is removed before the message is stored, the results of a call
(real, or "interrupted" ones on resume) are stored before the next assistant message, a rewind
removes the tags whose summary or marker it removed, and a parent always comes after what it tags
(a summary is stored after the messages it summarizes, a marker inserted after the messages its
truncation hides). A flag on a shape the agent can never be given is not a finding about the agent,
so a target that declares this space is judged on drawn histories rewritten into it.

The rewrite keeps everything else: every shape a correct agent does store (results split by an
image, text before a result, orphans after a resumed turn, duplicate results, consecutive user
messages, hidden and condensed messages) stays in the space, so those defects are still judged.

A library (pydantic-ai, LangChain) has no notion of Roo's summaries, markers and the tags that hide
messages: its callers never hold them, and a key it does not know is only carried along. Handed a
marker, such a target may merge it into a neighbour as it merges any message, which shows what the
marker hid: a flag about Roo's format, not about the library. ``untagged`` draws the same histories
with those keys taken off, every pairing shape kept.
"""

from __future__ import annotations

from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.contract_data import INTERRUPTED_TEXT, VISIBILITY_KEYS, tool_use_ids
from ctxmodel.json_types import JsonMessage as Msg

__all__ = [
    "AGENT_STORED", "INTERRUPTED", "UNTAGGED", "agent_stored", "agent_stored_params", "restrict", "untagged",
    "untagged_params", "within",
]

#: The ``inputs`` policy value that selects this space.
AGENT_STORED = "agent-stored"

#: The ``inputs`` policy value of a target without Roo's visibility (a library).
UNTAGGED = "untagged"

#: What the agents store as the result of a call a resumed task never ran (domain §4.1).
INTERRUPTED = INTERRUPTED_TEXT

_HIDING_TAGS = ("condenseParent", "truncationParent")


def _without_repeated_uses(message: Msg) -> Msg:
    """The Task's pre-flight deduplication: a repeated id within one message keeps its first block."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return message
    seen: set[str] = set()
    kept: list[Any] = []
    for block in message["content"]:
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            if block["id"] in seen:
                continue
            seen.add(block["id"])
        kept.append(block)
    if len(kept) == len(message["content"]):
        return message
    return {**message, "content": kept}


def _interrupted_results(after: Msg) -> Msg:
    """The user message a resumed task stores after a call it never ran, hidden where the call is."""
    results = [{"type": "tool_result", "tool_use_id": tid, "content": INTERRUPTED} for tid in tool_use_ids(after)]
    out: Msg = {"role": "user", "content": results}
    for key in (*_HIDING_TAGS, "ts"):
        if key in after:
            out[key] = after[key]
    return out


def _without_stale_tags(messages: list[Msg]) -> list[Msg]:
    """Tags a correct agent never stores: one naming no existing parent of its kind (a rewind strips
    them), one whose parent comes before the message (a summary tags the messages it summarizes,
    before it; a truncation tags messages and then inserts its marker after them), and any tag on
    the last summary (it is the first visible message, which no truncation tags, and a later
    condense would make another summary the last)."""
    summary_at = {m.get("condenseId"): i for i, m in enumerate(messages) if m.get("isSummary") is True}
    marker_at = {m.get("truncationId"): i for i, m in enumerate(messages) if m.get("isTruncationMarker") is True}
    last_summary = max(summary_at.values(), default=-1)
    out: list[Msg] = []
    for i, message in enumerate(messages):
        drop: set[str] = set()
        for tag, parents in (("condenseParent", summary_at), ("truncationParent", marker_at)):
            if tag in message and (parents.get(message[tag], -1) <= i or i == last_summary):
                drop.add(tag)
        out.append({k: v for k, v in message.items() if k not in drop} if drop else message)
    return out


def agent_stored(messages: list[Msg]) -> list[Msg]:
    """``messages`` rewritten into the agent-stored space (a new list; the input is not changed)."""
    out: list[Msg] = []
    for message in (_without_repeated_uses(m) if isinstance(m, dict) else m for m in messages):
        previous = out[-1] if out else None
        if (isinstance(previous, dict) and isinstance(message, dict) and previous.get("role") == "assistant"
                and message.get("role") == "assistant" and tool_use_ids(previous)):
            out.append(_interrupted_results(previous))
        out.append(message)
    if not all(isinstance(m, dict) for m in out):
        return out
    return _without_stale_tags(out)


def agent_stored_params(params: dict[str, Any]) -> dict[str, Any]:
    """An op's params with their history rewritten into the agent-stored space."""
    messages = params.get("messages")
    if not isinstance(messages, list):
        return params
    return {**params, "messages": agent_stored(messages)}


def untagged(messages: list[Msg]) -> list[Msg]:
    """``messages`` without the keys of Roo's visibility (a new list; the input is not changed)."""
    return [{k: v for k, v in m.items() if k not in VISIBILITY_KEYS} if isinstance(m, dict) else m for m in messages]


def untagged_params(params: dict[str, Any]) -> dict[str, Any]:
    """An op's params with their history taken out of Roo's visibility."""
    messages = params.get("messages")
    if not isinstance(messages, list):
        return params
    return {**params, "messages": untagged(messages)}


_SPACES = {AGENT_STORED: agent_stored_params, UNTAGGED: untagged_params}


def restrict(strategy: SearchStrategy[dict[str, Any]], inputs: str) -> SearchStrategy[dict[str, Any]]:
    """The params strategy of a target that declared ``inputs`` (contract §7)."""
    space = _SPACES.get(inputs)
    return strategy.map(space) if space is not None else strategy


def within(params: dict[str, Any], inputs: str) -> bool:
    """Whether ``params`` lie in the declared input space: what the gate's trim of a failing request
    may keep (a smaller request the target can never be given shows nothing about it)."""
    space = _SPACES.get(inputs)
    return space is None or space(params) == params
