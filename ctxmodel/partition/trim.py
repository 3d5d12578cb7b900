"""The ``trim`` cells (contract §10, §10.1, §10.8): ``trim:POINT/SHAPE``, in every dialect.

A trimmer goes wrong where its cut meets a binding: a call and its result, parallel calls, reasoning
and the call or message it produced, a result whose call is already gone, a call still in flight.
And it goes wrong at a few budgets: the history fits; it is a few tokens over; one turn, all but the
last turn, all but the floor must go; not even the floor fits; a cut between two messages. So one
axis is the budget point the request was drawn at (``POINT``, read from the ``_budget`` key
:mod:`ctxmodel.strategies.trim` places; ``given`` for a request that names ``maxTokens`` itself),
the other every binding the history holds (``SHAPE``; ``plain`` when it holds none). A history
reaches the cell of each of its shapes at its one point: a property that never met reasoning bound
to a call at the floor budget says so.

The shapes are read from the wire JSON of each dialect (domain §5.1, §5.6, §5.7, §5.8, §5.9, §5.10), not with a
dialect's codec: a classifier must read a hand-written or a broken history without raising.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["POINTS", "SHAPES", "TRIM_CELLS", "budget_point", "history_shapes", "trim_cells"]

#: Where the budget lies (contract §10), read from the ``_budget`` point
#: :mod:`ctxmodel.strategies.trim` draws: at the whole history's count (or above it), a few tokens under it,
#: the count without the first turn, of the last turn, of the floor (a token either way, or more),
#: below the floor, at the count of the newest or the oldest ``k`` messages, a number of tokens, and
#: no budget at all (``trimBudget=none``).
POINTS: tuple[str, ...] = (
    "whole", "just-over", "one-turn", "last-turn", "floor", "below-floor", "suffix-cut", "prefix-cut", "tokens",
    "unbounded",
)

_AT = {"all": "whole", "drop-first-turn": "one-turn", "last-turn": "last-turn", "newest": "suffix-cut",
       "oldest": "prefix-cut", "tokens": "tokens"}

#: The bindings a cut can meet (contract §10.1 pairing, §10.8 reasoning).
SHAPES: tuple[str, ...] = (
    "plain",              # no call, no reasoning
    "pair",               # a call answered by its result
    "parallel",           # one model step with two or more calls
    "unanswered",         # a call with no result after it (in flight, or lost)
    "orphan",             # a result no earlier call asked for
    "reasoning-call",     # reasoning bound to the call(s) it produced
    "reasoning-message",  # reasoning bound to an answer without calls
)

TRIM_CELLS: tuple[str, ...] = tuple(f"trim:{p}/{s}" for p in POINTS for s in SHAPES)

Item = Mapping[str, Any]


def trim_cells(params: Mapping[str, Any]) -> set[str]:
    """The cell of every shape the request's history holds, at its budget point."""
    return {f"trim:{budget_point(params)}/{s}" for s in history_shapes(params["messages"])}


def budget_point(params: Mapping[str, Any]) -> str:
    """Where the request's budget lies; ``given`` for a ``maxTokens`` written by hand (a fixture)."""
    budget = params.get("_budget")
    if budget is None:
        return "given" if "maxTokens" in params else "unbounded"
    at = budget.get("at")
    if at == "floor":
        return "floor" if int(budget.get("delta", 0)) >= 0 else "below-floor"
    if at == "all" and int(budget.get("delta", 0)) < 0:
        return "just-over"
    if at not in _AT:
        raise ValueError(f"_budget.at: unknown budget point {at!r}")
    return _AT[at]


def history_shapes(messages: Sequence[Item], dialect: str | None = None) -> set[str]:
    """Every binding in ``messages``; ``dialect`` as declared, or read from the items' shapes."""
    dialect = dialect or _guess(messages)
    if dialect == "openai-responses":
        steps = _responses_steps(messages)
    elif dialect == "openai-chat":
        steps = _chat_steps(messages)
    elif dialect == "bedrock-converse":
        steps = _converse_steps(messages)
    elif dialect == "gemini":
        steps = _gemini_steps(messages)
    else:
        steps = _anthropic_steps(messages)
    return _shapes(steps) or {"plain"}


#: One model step as the shapes see it: its call ids, whether reasoning opens it, and the result ids
#: of the user or tool messages that follow (in history order, steps and results interleaved).
_Step = tuple[str, list[str], bool]  # ("step", call ids, reasoning) or ("result", [call id], False)


def _shapes(events: Sequence[_Step]) -> set[str]:
    out: set[str] = set()
    asked: set[str] = set()
    answered: set[str] = set()
    for kind, ids, reasoning in events:
        if kind == "step":
            if len(ids) >= 2:
                out.add("parallel")
            if reasoning:
                out.add("reasoning-call" if ids else "reasoning-message")
            asked.update(ids)
            continue
        for call_id in ids:
            if call_id in asked:
                out.add("pair")
                answered.add(call_id)
            else:
                out.add("orphan")
    if asked - answered:
        out.add("unanswered")
    return out


_CHAT_KEYS = ("tool_calls", "reasoning_content", "reasoning", "tool_call_id")


_CONVERSE_KEYS = ("toolUse", "toolResult", "reasoningContent")


def _guess(messages: Sequence[Item]) -> str:
    """The dialect the items read as: a top-level ``type`` is Responses, a Chat-only key or role is
    Chat, a Converse-only block key is Converse; what is left reads the same in Anthropic's reader
    (no call, no reasoning to find)."""
    items = [m for m in messages if isinstance(m, Mapping)]
    if any("parts" in m for m in items):
        return "gemini"
    blocks = [b for m in items if isinstance(m.get("content"), list) for b in m["content"]]
    if any(isinstance(b, Mapping) and any(k in b for k in _CONVERSE_KEYS) for b in blocks):
        return "bedrock-converse"
    if any("type" in m for m in items):
        return "openai-responses"
    if any(k in m for m in items for k in _CHAT_KEYS) or any(m.get("role") in ("tool", "system") for m in items):
        return "openai-chat"
    return "anthropic"


def _anthropic_steps(messages: Sequence[Item]) -> list[_Step]:
    out: list[_Step] = []
    for m in messages:
        content = m.get("content") if isinstance(m, Mapping) else None
        blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
        if m.get("role") == "assistant":
            ids = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            thinks = any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks)
            out.append(("step", ids, thinks))
        else:
            results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
            if results:
                out.append(("result", results, False))
    return out


def _converse_steps(messages: Sequence[Item]) -> list[_Step]:
    """Anthropic's steps, blocks read by their key (domain §5.10)."""
    out: list[_Step] = []
    for m in messages:
        content = m.get("content") if isinstance(m, Mapping) else None
        blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
        if m.get("role") == "assistant":
            ids = [str(b["toolUse"].get("toolUseId")) for b in blocks if isinstance(b.get("toolUse"), Mapping)]
            out.append(("step", ids, any("reasoningContent" in b for b in blocks)))
        else:
            results = [str(b["toolResult"].get("toolUseId")) for b in blocks
                       if isinstance(b.get("toolResult"), Mapping)]
            if results:
                out.append(("result", results, False))
    return out


def _gemini_steps(contents: Sequence[Item]) -> list[_Step]:
    """A model content is a step (its ``functionCall`` parts its calls, ``thought`` parts or a
    signature its reasoning); a user content's ``functionResponse`` parts are results, matched by
    id where the calls have one, else by name (domain §5.9)."""
    out: list[_Step] = []
    for c in contents:
        parts = c.get("parts") if isinstance(c, Mapping) else None
        parts = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
        if c.get("role") == "model":
            fns = [p.get("functionCall", p.get("function_call")) for p in parts]
            ids = [str(f.get("id") or f.get("name")) for f in fns if isinstance(f, Mapping)]
            thinks = any(p.get("thought") is True or "thoughtSignature" in p or "thought_signature" in p
                         for p in parts)
            out.append(("step", ids, thinks))
        else:
            fns = [p.get("functionResponse", p.get("function_response")) for p in parts]
            results = [str(f.get("id") or f.get("name")) for f in fns if isinstance(f, Mapping)]
            if results:
                out.append(("result", results, False))
    return out


def _chat_steps(messages: Sequence[Item]) -> list[_Step]:
    out: list[_Step] = []
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        if m.get("role") == "assistant":
            calls = m.get("tool_calls")
            ids = [str(c.get("id")) for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
            said = m.get("reasoning_content", m.get("reasoning"))
            out.append(("step", ids, isinstance(said, str) and said != ""))
        elif m.get("role") == "tool":
            out.append(("result", [str(m.get("tool_call_id"))], False))
    return out


def _responses_steps(items: Sequence[Item]) -> list[_Step]:
    """Consecutive ``function_call`` items are one step; a ``reasoning`` item opens the step of the
    item after it (domain §5.7: reasoning is bound to its following item)."""
    out: list[_Step] = []
    reasoning = False
    calls: list[str] | None = None
    for m in items:
        kind = m.get("type", "message") if isinstance(m, Mapping) else None
        if kind != "function_call" and calls is not None:
            out.append(("step", calls, reasoning))
            calls, reasoning = None, False
        if kind == "reasoning":
            reasoning = True
        elif kind == "function_call":
            if calls is None:
                calls = []
            calls.append(str(m.get("call_id")))
        elif kind == "function_call_output":
            out.append(("result", [str(m.get("call_id"))], False))
            reasoning = False
        elif kind == "message" and m.get("role") == "assistant":
            out.append(("step", [], reasoning))
            reasoning = False
        else:
            reasoning = False
    if calls is not None:
        out.append(("step", calls, reasoning))
    return out
