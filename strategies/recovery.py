"""Recovery requests whose budget is chosen relative to the history's own count (contract §4).

A fixed ``contextWindow`` would leave almost every drawn history "within budget"; here the history
(and system prompt) is drawn first, counted with the harness's counter (contract §5), and then the
budget is placed where the case needs it: within (the equal-count edge included), a little over,
far over, impossible (a giant first or last visible message no truncation may hide), and
``allowed <= 0``; independently ``maxTokens <= 0`` (reserve 8192).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from ctxmodel.codec import load
from ctxmodel.tokens import get_counter, request_tokens
from strategies.histories import histories, well_formed_histories
from strategies.labels import visibility
from strategies.text import chance, texts

__all__ = [
    "DEFAULT_RESERVE",
    "RECOVERY_CASES",
    "allowed_tokens",
    "count_messages",
    "count_request",
    "recovery_case",
    "recovery_requests",
]

DEFAULT_RESERVE = 8192
#: The cases of contract §4 a request can be in, in shrink order.
RECOVERY_CASES: tuple[str, ...] = ("within", "little-over", "far-over", "impossible", "allowed<=0")

Msg = Mapping[str, Any]


def allowed_tokens(context_window: int, max_tokens: int) -> int:
    """Contract §4 budget: ``floor(0.9 * contextWindow) - reserve`` (reserve 8192 when maxTokens <= 0)."""
    reserve = max_tokens if max_tokens > 0 else DEFAULT_RESERVE
    return math.floor(0.9 * context_window) - reserve


def count_messages(messages: Sequence[Msg], system_prompt: str = "") -> int:
    """``count(systemPrompt) + count(messages)`` with the harness's ``zoo`` counter (contract §4, §5)."""
    counter = get_counter("zoo")
    return counter.count_text(system_prompt) + counter.count_messages(load(list(messages)))


def count_request(messages: Sequence[Msg], system_prompt: str = "") -> int:
    """The harness's recount of a request: system prompt plus the *effective* history (contract §4)."""
    return request_tokens(load(list(messages)), system_prompt, "zoo")


def _irreducible(messages: Sequence[Msg], system_prompt: str) -> int:
    """A lower bound on what any recovery must keep: the system prompt, the first and last visible
    messages (never hidden, contract §4.3) less their tool results (degradable, §4.5)."""
    hidden = visibility(messages)
    vis = [m for m, h in zip(messages, hidden, strict=True) if h is None]
    if not vis:
        return count_messages([], system_prompt)
    keep = [vis[0]] if len(vis) == 1 else [vis[0], vis[-1]]
    stripped = []
    for m in keep:
        content = m.get("content")
        if isinstance(content, list):
            content = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        stripped.append({**m, "content": content})
    return count_messages(stripped, system_prompt)


def recovery_case(request: Mapping[str, Any]) -> str:
    """Which case of contract §4 a request is in, judged by recounting it (not by how it was drawn)."""
    allowed = allowed_tokens(request["contextWindow"], request["maxTokens"])
    if allowed <= 0:
        return "allowed<=0"
    system_prompt = request.get("systemPrompt", "")
    total = count_request(request["messages"], system_prompt)
    if total <= allowed:
        return "within"
    if _irreducible(request["messages"], system_prompt) > allowed:
        return "impossible"
    if total - allowed <= max(1, total // 10):
        return "little-over"
    return "far-over"


def _window_for(allowed: int, reserve: int) -> int:
    """The smallest ``contextWindow`` whose budget is at least ``allowed`` (float formula, as targets use)."""
    window = max(1, math.ceil((allowed + reserve) / 0.9) - 1)
    while math.floor(0.9 * window) - reserve < allowed:
        window += 1
    return window


def _with_giant(messages: list[dict[str, Any]], giant: str, at_end: bool) -> list[dict[str, Any]]:
    """The history with a giant text added to its first or last visible message (a fresh copy)."""
    out = [dict(m) for m in messages]
    hidden = visibility(out)
    vis = [i for i, h in enumerate(hidden) if h is None]
    if not vis:
        out.append({"role": "user", "content": giant})
        return out
    i = vis[-1] if at_end else vis[0]
    content = out[i]["content"]
    if isinstance(content, str):
        out[i]["content"] = content + "\n" + giant
    else:
        out[i]["content"] = [*content, {"type": "text", "text": giant}]
    return out


def _with_big_middle_result(messages: list[dict[str, Any]], giant: str) -> list[dict[str, Any]]:
    """The history with one visible result between the first and last visible messages made oversized.

    That result is exactly what recovery may hide or degrade (contract §4.3, §4.5), so the request
    lands far over budget yet stays recoverable. Unchanged when no such result exists.
    """
    hidden = visibility(messages)
    vis = [i for i, h in enumerate(hidden) if h is None][1:-1]
    for i in reversed(vis):
        content = messages[i].get("content")
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out = list(messages)
                blocks = list(content)
                blocks[j] = {**block, "content": giant}
                out[i] = {**messages[i], "content": blocks}
                return out
    return messages


@st.composite
def _requests(draw: st.DrawFn, history: st.SearchStrategy[list[dict[str, Any]]], cases: tuple[str, ...],
              nonpositive_max_tokens: bool) -> dict[str, Any]:
    messages = draw(history)
    case = draw(st.sampled_from(cases))
    system_prompt = draw(st.one_of(st.just(""), texts(max_size=80),
                                   texts(min_size=500, max_size=5000)))
    if nonpositive_max_tokens and draw(chance(15)):
        max_tokens = draw(st.integers(-10, 0))
    else:
        max_tokens = draw(st.sampled_from((4096, 8192, 16384, 64000, 1, 100)))
    reserve = max_tokens if max_tokens > 0 else DEFAULT_RESERVE
    if case in ("impossible", "far-over", "little-over"):
        low = 300 if case == "little-over" else 3000
        giant = draw(texts(min_size=low, max_size=10 * low, kinds=("prose", "code", "nospace", "onechar")))
        if case == "impossible":
            messages = _with_giant(messages, giant, at_end=draw(st.booleans()))
        else:
            messages = _with_big_middle_result(messages, giant)
    total = count_request(messages, system_prompt)
    if case == "allowed<=0":
        window = draw(st.integers(1, max(1, math.floor(reserve / 0.9))))
        if draw(chance(30)):
            # The boundary itself: allowed == 0 exactly, sometimes with nothing to count (a count
            # of 0 is "within" a budget of 0, so only the rule of contract §4.1 makes it an error).
            window = next((w for w in range(math.ceil(reserve / 0.9) - 2, math.ceil(reserve / 0.9) + 3)
                           if w > 0 and (9 * w) // 10 - reserve == 0), window)
            if draw(chance(50)):
                messages, system_prompt = [], ""
    else:
        if case == "within":
            target_allowed = total if draw(chance(25)) else total + draw(st.integers(0, 2 * total + 100))
        elif case == "little-over" and total >= 2:
            floor = _irreducible(messages, system_prompt)
            target_allowed = max(floor, total - draw(st.integers(1, max(1, total // 10))))
        elif case == "impossible":
            floor = _irreducible(messages, system_prompt)
            target_allowed = max(1, floor - 1 - draw(st.integers(0, max(0, floor - 2))))
        else:  # far over (and little-over on a history too small to be a little over)
            floor = _irreducible(messages, system_prompt)
            top = total - total // 10 - 1
            if floor <= top:
                target_allowed = draw(st.integers(floor, top))
            else:
                target_allowed = max(1, draw(st.integers(1, max(1, total // 3))))
        window = _window_for(target_allowed, reserve)
    request = {"messages": messages, "contextWindow": window, "maxTokens": max_tokens, "systemPrompt": system_prompt}
    if currently_in_test_context():
        event(f"recovery: {recovery_case(request)}")
        if max_tokens <= 0:
            event("recovery: maxTokens<=0")
    return request


def recovery_requests(
    *,
    history: st.SearchStrategy[list[dict[str, Any]]] | None = None,
    broken: bool | None = None,
    cases: Sequence[str] = RECOVERY_CASES,
    nonpositive_max_tokens: bool = True,
) -> st.SearchStrategy[dict[str, Any]]:
    """``{"messages", "contextWindow", "maxTokens", "systemPrompt"}`` covering every case of contract §4.

    ``history`` overrides where messages come from; otherwise ``broken`` picks ``histories()``
    (True), ``well_formed_histories()`` (False) or either (None, the default). ``cases`` restricts
    the intended case (the label names the case the recount actually finds). No ``target()`` here:
    steering toward "more over budget" would starve the within and little-over cases.
    """
    if history is None:
        if broken is None:
            history = st.one_of(well_formed_histories(), histories())
        else:
            history = histories() if broken else well_formed_histories()
    unknown = set(cases) - set(RECOVERY_CASES)
    if unknown:
        raise ValueError(f"recovery_requests: unknown case(s) {sorted(unknown)}; expected {RECOVERY_CASES}")
    return _requests(history, tuple(cases), nonpositive_max_tokens)
