"""The ``recover`` cells (contract §4): ``recover:REGIME/VISIBLE/DEGRADABLE``, and the classifier
that puts a request in its cell.

The regime is decided by the harness's recount and, over budget, by asking the reference how far
hiding and degrading reach (it measures the input, not the target); what is visible and what can be
degraded are read off the JSON (``ctxmodel.contract_data.hidden_reasons``). The package docstring
names every value.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ctxmodel.contract_data import (
    BEFORE_SUMMARY,
    CONDENSED,
    FLOOR_CHARS,
    TRUNCATED,
    allowed_tokens,
    existing_parents,
    hidden_reasons,
    last_summary_index,
    reserve_for,
    usable_window,
    window_for,
)
from ctxmodel.json_types import JsonMessageView as Msg
from ctxmodel.partition.blocks import blocks_of, is_block
from ctxmodel.partition.patterns import matches

__all__ = [
    "COLLAPSED",
    "DEGRADABLE",
    "DENSE_MAX_CHARS",
    "EVERY_REGIME",
    "IMPOSSIBLE",
    "RECOVER_CELLS",
    "REGIMES",
    "VISIBLE",
    "by_degradable",
    "by_visible",
    "degradable_kind",
    "pattern",
    "progress_possible",
    "recover_cell",
    "recover_parts",
    "reference_recover",
    "request_count",
    "visible_kind",
]

REGIMES: tuple[str, ...] = (
    "within", "at-allowed", "over-hide", "over-degrade-only", "over-stuck", "over-none", "allowed<=0", "reserve-gap",
)
#: Regimes where nothing is to be degraded: their cells do not name a ``DEGRADABLE`` value.
COLLAPSED: frozenset[str] = frozenset({"within", "at-allowed", "allowed<=0", "reserve-gap"})
VISIBLE: tuple[str, ...] = ("plain", "condensed", "truncated", "dangling", "legacy")
DEGRADABLE: tuple[str, ...] = ("string", "image", "dense", "none")

#: ``dense`` is a text just above the floor: at most this many characters.
DENSE_MAX_CHARS = 400

#: Cells that no input can be in, with the reason.
IMPOSSIBLE: dict[str, str] = {
    f"recover:over-degrade-only/{v}/none": "the reference fitted by degrading a visible tool-result text over the "
    "200-character floor, so the request has one"
    for v in VISIBLE
}


def _recover_cells() -> tuple[str, ...]:
    out: list[str] = []
    for regime in REGIMES:
        for visible in VISIBLE:
            if regime in COLLAPSED:
                out.append(f"recover:{regime}/{visible}")
                continue
            out.extend(f"recover:{regime}/{visible}/{d}" for d in DEGRADABLE)
    return tuple(c for c in out if c not in IMPOSSIBLE)


RECOVER_CELLS: tuple[str, ...] = _recover_cells()


def _possible(pattern: str) -> bool:
    return any(matches(pattern, c) for c in RECOVER_CELLS)


def pattern(regime: str, visible: str = "*", degradable: str = "*") -> str:
    """The recover pattern of ``regime`` (``*`` for any value of an axis; a regime where nothing is
    degraded has no ``DEGRADABLE`` segment)."""
    if regime in COLLAPSED:
        return f"recover:{regime}/{visible}"
    return f"recover:{regime}/{visible}/{degradable}"


def by_visible(regime: str) -> tuple[str, ...]:
    """``regime`` once per ``VISIBLE`` value."""
    return tuple(pattern(regime, v) for v in VISIBLE)


def by_degradable(regime: str) -> tuple[str, ...]:
    """``regime`` once per ``DEGRADABLE`` value an input can have there."""
    return tuple(pattern(regime, "*", d) for d in DEGRADABLE if _possible(pattern(regime, "*", d)))


#: Every regime, whatever is visible: the plan of a recover property that declares none.
EVERY_REGIME: tuple[str, ...] = tuple(pattern(r) for r in REGIMES)


# -- what is visible, what can be degraded (contract §2, §4.5) -------------------------------------


def visible_kind(messages: Sequence[Msg]) -> str:
    """The ``VISIBLE`` value of a history (the first that applies, in the order legacy, dangling,
    truncated, condensed, plain)."""
    hidden = hidden_reasons(messages)
    summaries, markers = existing_parents(messages)
    last = last_summary_index(messages)
    legacy = dangling = False
    for i, (m, why) in enumerate(zip(messages, hidden, strict=True)):
        if why is None and m.get("role") == "assistant" and (
                m.get("isTruncationMarker") is True or m.get("isSummary") is True):
            legacy = True
        if i > last and why is None:
            cp, tp = m.get("condenseParent"), m.get("truncationParent")
            if (cp is not None and not (isinstance(cp, str) and cp in summaries)) or (
                    tp is not None and not (isinstance(tp, str) and tp in markers)):
                dangling = True
    if legacy:
        return "legacy"
    if dangling:
        return "dangling"
    if TRUNCATED in hidden:
        return "truncated"
    if CONDENSED in hidden or BEFORE_SUMMARY in hidden:
        return "condensed"
    return "plain"


def _dense(text: str) -> bool:
    return 2 * sum(1 for c in text if ord(c) > 127) >= len(text)


def degradable_kind(messages: Sequence[Msg]) -> str:
    """The ``DEGRADABLE`` value: the kind of the largest visible textual tool-result text over the floor."""
    best: tuple[int, str, str] | None = None  # (length, kind, text); the earliest wins a tie
    for m, why in zip(messages, hidden_reasons(messages), strict=True):
        if why is not None:
            continue
        for block in blocks_of(m):
            if not is_block(block, "tool_result"):
                continue
            inner = block.get("content")
            found: list[tuple[str, str]] = []
            if isinstance(inner, str):
                found.append(("string", inner))
            elif isinstance(inner, list):
                kind = "image" if any(is_block(i, "image") for i in inner) else "string"
                found.extend((kind, i["text"]) for i in inner if is_block(i, "text") and isinstance(i.get("text"), str))
            for kind, text in found:
                if len(text) > FLOOR_CHARS and (best is None or len(text) > best[0]):
                    best = (len(text), kind, text)
    if best is None:
        return "none"
    length, kind, text = best
    if length <= DENSE_MAX_CHARS and _dense(text):
        return "dense"
    return kind


# -- the regime (contract §4) ----------------------------------------------------------------------


def reference_recover(messages: Sequence[Msg], context_window: int, max_tokens: int, system_prompt: str) -> Any:
    """The reference's recovery of a JSON request (fresh ids), to measure where the request lies."""
    from ctxmodel.codec import load
    from ctxmodel.recover import recover

    ids = (f"ctxmodel-coverage-{n}" for n in itertools.count())
    return recover(load(list(messages)), context_window=context_window, max_tokens=max_tokens,
                   system_prompt=system_prompt, new_id=lambda: next(ids))


def request_count(messages: Sequence[Msg], system_prompt: str = "") -> int:
    """The harness's recount (contract §4): system prompt plus effective history, the ``zoo`` counter."""
    from ctxmodel.codec import load
    from ctxmodel.tokens import request_tokens

    return request_tokens(load(list(messages)), system_prompt, "zoo")


def progress_possible(messages: Sequence[Msg], system_prompt: str, reserve: int, count: int | None = None) -> bool:
    """Whether the reference brings the request one token under its count (contract §4.6 progress)."""
    count = request_count(messages, system_prompt) if count is None else count
    if count <= 1:
        return False
    got = reference_recover(messages, window_for(count - 1, reserve), reserve, system_prompt)
    return got.error is None


def recover_parts(params: Mapping[str, Any]) -> tuple[str, str, str]:
    """(regime, visible, degradable) of a recover request; ``degradable`` is "-" in a collapsed regime."""
    messages: list[Msg] = params["messages"]
    window = int(params["contextWindow"])
    max_tokens = int(params.get("maxTokens", 0))
    system_prompt = params.get("systemPrompt") or ""
    visible = visible_kind(messages)
    allowed = allowed_tokens(window, max_tokens)
    if allowed <= 0:
        return "allowed<=0", visible, "-"
    count = request_count(messages, system_prompt)
    if count < allowed:
        return "within", visible, "-"
    if count == allowed:
        return "at-allowed", visible, "-"
    if max_tokens <= 0 and count <= usable_window(window) - max_tokens:
        return "reserve-gap", visible, "-"
    degradable = degradable_kind(messages)
    got = reference_recover(messages, window, max_tokens, system_prompt)
    if got.error is None:
        return ("over-degrade-only" if got.degraded else "over-hide"), visible, degradable
    stuck = progress_possible(messages, system_prompt, reserve_for(max_tokens), count)
    return ("over-stuck" if stuck else "over-none"), visible, degradable


def recover_cell(params: Mapping[str, Any]) -> str:
    regime, visible, degradable = recover_parts(params)
    return pattern(regime, visible, degradable)
