"""``trim`` requests in the target's declared dialect (contract §10), budgets placed where it matters.

A trimmer's behaviour changes at a few budgets: the history fits untouched; one turn must go; all
but the last turn must go; only the floor (what the declared policies keep) is left; not even that
fits, so the answer is the controlled error. The budget is drawn at those points (each exactly, and
one token either side, where off-by-one bugs live), anywhere in between, and at every message
boundary: the budget that the newest ``k`` messages (or the oldest) exactly fill, with the floor.
A trimmer that cuts by messages rather than by turns cuts there, and a boundary inside a turn (a
window that starts on a ``tool`` message, parallel results split) is a budget band only a few
tokens wide, which neither the turn points nor a uniform draw reach. The budgets are measured by the
counter a target of the default tokenizer counts with (``zoo``; in ``openai-chat`` the reference's
count of Chat Completions messages, which is what the contract documents). A target counting
otherwise still gets budgets near its own points, and the properties judge with its own ``count``.

Histories: Chat Completions ones from :mod:`ctxmodel.strategies.openai_chat`; Anthropic ones as a
request carries them (no hidden messages): mostly what a correct agent stores, a call in flight
allowed, and now and then a history with pairing defects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import event
from hypothesis import strategies as st

from ctxmodel.strategies.text import chance, pick, texts

__all__ = ["BUDGET_POINTS", "trim_histories", "trim_requests"]

Msg = dict[str, Any]

#: Where a budget is placed (see the module): each an ``event`` label of the draw.
BUDGET_POINTS: tuple[str, ...] = (
    "fits", "one-turn", "last-turn", "floor", "impossible", "anywhere", "suffix-cut", "prefix-cut",
)


def trim_histories(dialect: str) -> st.SearchStrategy[list[Msg]]:
    """Histories a trimmer is handed in ``dialect``."""
    if dialect == "openai-chat":
        from ctxmodel.strategies.openai_chat import chat_histories

        return chat_histories()
    from ctxmodel.strategies.histories import histories, well_formed_histories

    stored = well_formed_histories(min_turns=1, summaries=False, truncations=False, pending=True)
    defective = histories(min_turns=1, summaries=False, legacy_summaries=False, truncations=False,
                          legacy_markers=False, dangling_parents=False, big_results=True)
    return st.one_of(stored, stored, stored, defective)


def _is_prompt(message: Mapping[str, Any], dialect: str) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    return dialect == "openai-chat" or not (
        isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


def _floor(messages: Sequence[Msg], dialect: str, policies: Mapping[str, str]) -> list[int]:
    chat = dialect == "openai-chat"
    system = [i for i, m in enumerate(messages) if chat and m.get("role") in ("system", "developer")]
    keep = set()
    if policies.get("trimSystem", "keep") == "keep":
        keep |= set(system)
    elif policies.get("trimSystem") == "first" and system[:1] == [0]:
        keep.add(0)
    if policies.get("trimLastUser", "keep") == "keep":
        keep |= set([i for i, m in enumerate(messages) if _is_prompt(m, dialect)][-1:])
    return sorted(keep)


def _estimate(dialect: str, system_prompt: str) -> Any:
    from ctxmodel.tokens import get_counter

    counter = get_counter("zoo")
    if dialect == "openai-chat":
        from ctxmodel.tokens.chat import count_chat

        return lambda messages: count_chat(counter, messages)
    from ctxmodel import codec

    prompt = counter.count_text(system_prompt)
    return lambda messages: prompt + counter.count_messages(codec.load(messages, copy=False))


def _points(messages: list[Msg], dialect: str, policies: Mapping[str, str], system_prompt: str) -> dict[str, int]:
    """The budget at each point of :data:`BUDGET_POINTS` but ``anywhere``."""
    count = _estimate(dialect, system_prompt)
    floor = set(_floor(messages, dialect, policies))
    starts = [i for i, m in enumerate(messages) if _is_prompt(m, dialect)]
    first_end = starts[1] if len(starts) > 1 else len(messages)
    last_start = starts[-1] if starts else 0
    keep_one = [m for i, m in enumerate(messages) if i >= first_end or i in floor]
    keep_last = [m for i, m in enumerate(messages) if i >= last_start or i in floor]
    floor_tokens = count([messages[i] for i in sorted(floor)])
    return {
        "fits": count(messages),
        "one-turn": count(keep_one),
        "last-turn": count(keep_last),
        "floor": floor_tokens,
        "impossible": floor_tokens - 1,
    }


@st.composite
def _request(draw: st.DrawFn, dialect: str, policies: Mapping[str, str]) -> dict[str, Any]:
    messages = draw(trim_histories(dialect))
    params: dict[str, Any] = {"messages": messages}
    system_prompt = ""
    if dialect != "openai-chat" and draw(chance(50)):
        system_prompt = draw(texts(nonblank=True, max_size=300))
        params["systemPrompt"] = system_prompt
    if policies.get("trimBudget", "tokens") == "none":
        return params
    point = draw(pick(BUDGET_POINTS))
    event(f"trim budget: {point}")
    points = _points(messages, dialect, policies, system_prompt)
    if point in ("suffix-cut", "prefix-cut") and len(messages) > 1:
        k = draw(st.integers(1, len(messages) - 1))
        kept = range(k, len(messages)) if point == "suffix-cut" else range(len(messages) - k)
        floor = set(_floor(messages, dialect, policies))
        count = _estimate(dialect, system_prompt)
        budget = count([m for i, m in enumerate(messages) if i in kept or i in floor]) + draw(pick((0, 0, -1, 1)))
    elif point in ("suffix-cut", "prefix-cut", "anywhere"):
        budget = draw(st.integers(0, max(0, points["fits"])))
    elif point == "impossible":
        budget = points["impossible"] - draw(st.integers(0, 50))
    else:
        budget = points[point] + draw(pick((0, 0, -1, 1))) + (draw(st.integers(0, 200)) if point == "fits" else 0)
    params["maxTokens"] = max(0, budget)
    return params


def trim_requests(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """``trim`` params in the dialect the policies carry (contract §7 ``dialect``, §10)."""
    return _request(policies.get("dialect", "anthropic"), policies)
