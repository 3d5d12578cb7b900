"""What a drawn history has: one place that inspects it, for ``event()`` labels, tests and reports.

``features(history)`` names each shape the issue asks the strategies to produce ("orphan-after-
condense", "image-between-parallel-results", ...), judged on the JSON value itself so it works on
any history, drawn or loaded from a file. It reads visibility with the contract's JSON predicate
(``ctxmodel.contract_data``), not the reference's: the labels must not depend on the module they
help test.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import attrs
from hypothesis import event, target
from hypothesis.control import currently_in_test_context
from hypothesis.errors import InvalidArgument

from ctxmodel.contract_data import TRUNCATED, existing_parents, hidden_reasons, tool_use_ids
from ctxmodel.json_types import JsonMessageView as Msg
from ctxmodel.strategies.blocks import KNOWN_BLOCK_TYPES
from ctxmodel.strategies.ids import ID_STYLES, id_style

__all__ = [
    "FEATURES",
    "Analysis",
    "analyse",
    "features",
    "label",
    "safe_target",
    "steering",
    "visibility",
]

#: Every feature ``histories()`` is asked to produce, each at least 2% of examples.
FEATURES: tuple[str, ...] = (
    # orphans (contract §3.4), by how the field makes them
    "orphan-after-condense",
    "orphan-after-truncation",
    "orphan-two-turns-back",
    "orphan-after-user",
    "orphan-unknown-id",
    # duplicates (contract §3.2, §3.5)
    "duplicate-result",
    "duplicate-tool-use-across-messages",
    "duplicate-tool-use-in-message",
    # parallel calls and missing results (contract §3.1, §3.3)
    "parallel-calls",
    "missing-result",
    "parallel-missing-result",
    # arrangement of user messages (contract §3.1, §3.6)
    "image-between-results",
    "text-between-results",
    "image-between-parallel-results",
    "results-not-first",
    "results-out-of-order",
    # result content forms (domain §1.2)
    "result-content-string",
    "result-content-list",
    "result-content-absent",
    "result-content-list-image",
    "is-error",
    "big-tool-result",
    # condense and truncation (contract §2; domain §1.2 historical variants)
    "summary",
    "legacy-assistant-summary",
    "multiple-summaries",
    "condense-parent",
    "dangling-condense-parent",
    "truncation-marker",
    "legacy-assistant-marker",
    "truncation-parent",
    "dangling-truncation-parent",
    # roles and shapes
    "user-string-content",
    "consecutive-user",
    "consecutive-assistant",
    "trailing-tool-use",
    "image",
    "thinking",
    "redacted-thinking",
    "thinking-on-tool-turn",
    # unknown things (contract §1 lossless)
    "unknown-block-type",
    "unknown-block-key",
    "unknown-metadata-key",
    # defects normalization passes through (contract §3.8)
    "empty-text-block",
    "whitespace-text",
    "empty-message",
    "result-in-assistant",
    "leading-assistant",
    # id styles (domain §1.2, §5.1 id charset)
    *(f"id-{style}" for style in ID_STYLES),
    "id-bad",
)

_KNOWN_META = frozenset({
    "role", "content", "ts", "isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent",
    "isTruncationMarker",
})
_KNOWN_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "image": frozenset({"type", "source"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
}
BIG_RESULT_CHARS = 2000


def _blocks(message: Msg) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _is_block(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


def _result_ids(message: Msg) -> list[str]:
    return [b["tool_use_id"] for b in _blocks(message)
            if _is_block(b, "tool_result") and isinstance(b.get("tool_use_id"), str)]


def visibility(history: Sequence[Msg]) -> list[str | None]:
    """Per message, ``None`` when visible, else why hidden: "before-summary", "condense", "truncation".

    Contract §2: only the last summary and what follows are candidates; a parent tag hides only
    while the summary or marker it names exists anywhere in the input (a rewind restores).
    """
    return hidden_reasons(history)


@attrs.frozen
class Analysis:
    features: frozenset[str]
    #: Pairing defects of the effective history (orphans, missing and duplicate results, duplicate
    #: tool_use ids): what ``target()`` maximises, so the search leans toward hard cases.
    pairing_defects: int


def analyse(history: Sequence[Msg]) -> Analysis:
    f: set[str] = set()
    defects = 0
    hidden = visibility(history)
    eff = [m for m, h in zip(history, hidden, strict=True) if h is None]
    hidden_use: dict[str, str] = {}
    for m, why in zip(history, hidden, strict=True):
        for tid in tool_use_ids(m):
            if why is not None:
                hidden_use.setdefault(tid, why)

    # Orphans and missing results, judged on the effective history (what the API sees, contract §3.1/§3.4).
    for p, m in enumerate(eff):
        if m.get("role") != "user":
            continue
        prev = eff[p - 1] if p > 0 else None
        valid = set(tool_use_ids(prev)) if prev is not None else set()
        earlier = {tid for q in range(max(0, p - 1)) for tid in tool_use_ids(eff[q])}
        for rid in _result_ids(m):
            if rid in valid:
                continue
            defects += 1
            if prev is not None and prev.get("role") == "user":
                f.add("orphan-after-user")
            if rid in hidden_use:
                f.add("orphan-after-condense" if hidden_use[rid] != TRUNCATED else "orphan-after-truncation")
            elif rid in earlier:
                f.add("orphan-two-turns-back")
            elif all(rid not in tool_use_ids(x) for x in history):
                f.add("orphan-unknown-id")
    for p, m in enumerate(eff[:-1]):
        uses = tool_use_ids(m)
        if not uses:
            continue
        nxt = eff[p + 1]
        got = set(_result_ids(nxt)) if nxt.get("role") == "user" else set()
        missing = [u for u in uses if u not in got]
        defects += len(missing)
        if missing:
            f.add("missing-result")
            if len(uses) >= 2:
                f.add("parallel-missing-result")

    # Per message, stored order.
    seen_uses: set[str] = set()
    for i, m in enumerate(history):
        role = m.get("role")
        content = m.get("content")
        prev = history[i - 1] if i > 0 else None
        if prev is not None and prev.get("role") == role:
            f.add("consecutive-user" if role == "user" else "consecutive-assistant")
        if i == 0 and role == "assistant":
            f.add("leading-assistant")
        if set(m) - _KNOWN_META:
            f.add("unknown-metadata-key")
        if content == "" or content == []:
            f.add("empty-message")
        if isinstance(content, str) and role == "user" and m.get("isTruncationMarker") is not True:
            f.add("user-string-content")
        if m.get("isSummary") is True and role == "assistant":
            f.add("legacy-assistant-summary")
        if m.get("isTruncationMarker") is True and role == "assistant":
            f.add("legacy-assistant-marker")
        blocks = _blocks(m)
        uses = tool_use_ids(m)
        if len(uses) >= 2:
            f.add("parallel-calls")
        if len(set(uses)) < len(uses):
            f.add("duplicate-tool-use-in-message")
            defects += len(uses) - len(set(uses))
        if seen_uses & set(uses):
            f.add("duplicate-tool-use-across-messages")
            defects += len(seen_uses & set(uses))
        seen_uses |= set(uses)
        for tid in uses:
            f.add(f"id-{id_style(tid)}")
        results = _result_ids(m)
        if len(set(results)) < len(results):
            f.add("duplicate-result")
            defects += len(results) - len(set(results))
        if role == "assistant" and results:
            f.add("result-in-assistant")
        if role == "assistant" and uses and any(_is_block(b, "thinking") or _is_block(b, "redacted_thinking")
                                                for b in blocks):
            f.add("thinking-on-tool-turn")
        _arrangement(f, blocks, prev)
        for b in blocks:
            _block_features(f, b)
    if history and history[-1].get("role") == "assistant" and tool_use_ids(history[-1]):
        f.add("trailing-tool-use")
    _tag_features(f, history)
    return Analysis(frozenset(f), defects)


def _arrangement(f: set[str], blocks: list[Any], prev: Msg | None) -> None:
    """Where results sit among other blocks (contract §3.1: results first, tool_use order by policy)."""
    positions = [k for k, b in enumerate(blocks) if _is_block(b, "tool_result")]
    if not positions:
        return
    first, last = positions[0], positions[-1]
    if any(not _is_block(b, "tool_result") for b in blocks[:first]):
        f.add("results-not-first")
    between = [b for b in blocks[first:last] if not _is_block(b, "tool_result")]
    if any(_is_block(b, "image") for b in between):
        f.add("image-between-results")
        uses = set(tool_use_ids(prev)) if prev is not None else set()
        if len(uses) >= 2:
            for a, b in itertools.pairwise(positions):
                gap = blocks[a + 1 : b]
                if (any(_is_block(x, "image") for x in gap) and blocks[a].get("tool_use_id") in uses
                        and blocks[b].get("tool_use_id") in uses):
                    f.add("image-between-parallel-results")
    if any(_is_block(b, "text") for b in between):
        f.add("text-between-results")
    if prev is not None:
        order = tool_use_ids(prev)
        ids = [blocks[k].get("tool_use_id") for k in positions]
        ranks = [order.index(x) for x in ids if x in order]
        if ranks != sorted(ranks):
            f.add("results-out-of-order")


def _block_features(f: set[str], b: Any) -> None:
    if not isinstance(b, dict):
        return
    kind = b.get("type")
    if kind not in KNOWN_BLOCK_TYPES:
        f.add("unknown-block-type")
        return
    if set(b) - _KNOWN_BLOCK_KEYS[kind]:
        f.add("unknown-block-key")
    if kind == "text":
        text = b.get("text")
        if text == "":
            f.add("empty-text-block")
        elif isinstance(text, str) and not text.strip():
            f.add("whitespace-text")
    elif kind == "image":
        f.add("image")
    elif kind == "thinking":
        f.add("thinking")
    elif kind == "redacted_thinking":
        f.add("redacted-thinking")
    elif kind == "tool_result":
        content = b.get("content", None)
        if "content" not in b:
            f.add("result-content-absent")
        elif isinstance(content, str):
            f.add("result-content-string")
            if len(content) >= BIG_RESULT_CHARS:
                f.add("big-tool-result")
        elif isinstance(content, list):
            f.add("result-content-list")
            if any(_is_block(x, "image") for x in content):
                f.add("result-content-list-image")
            if sum(len(x.get("text", "")) for x in content if _is_block(x, "text")) >= BIG_RESULT_CHARS:
                f.add("big-tool-result")
            for item in content:
                if isinstance(item, dict) and item.get("type") not in KNOWN_BLOCK_TYPES:
                    f.add("unknown-block-type")
        if b.get("is_error") is True:
            f.add("is-error")


def _tag_features(f: set[str], history: Sequence[Msg]) -> None:
    summaries = [m for m in history if m.get("isSummary") is True]
    markers = [m for m in history if m.get("isTruncationMarker") is True]
    if summaries:
        f.add("summary")
    if len(summaries) >= 2:
        f.add("multiple-summaries")
    if markers:
        f.add("truncation-marker")
    condense_ids, truncation_ids = existing_parents(history)
    for m in history:
        parent = m.get("condenseParent")
        if parent is not None:
            f.add("condense-parent" if isinstance(parent, str) and parent in condense_ids
                  else "dangling-condense-parent")
        parent = m.get("truncationParent")
        if parent is not None:
            f.add("truncation-parent" if isinstance(parent, str) and parent in truncation_ids
                  else "dangling-truncation-parent")


def features(history: Sequence[Msg]) -> set[str]:
    """The labelled features of one history (any JSON history, drawn or loaded)."""
    return set(analyse(history).features)


#: The ``target()`` label a history's draw steers by (more pairing defects).
PAIRING_TARGET = "pairing defects"


#: Whether ``target()`` observations are recorded (see ``steering``).
_STEERING: ContextVar[bool] = ContextVar("ctxmodel_steering", default=True)


@contextlib.contextmanager
def steering(enabled: bool) -> Iterator[None]:
    """Record ``target()`` observations only where a run has Hypothesis's target phase.

    Without that phase nothing climbs on an observation, yet each one makes Hypothesis keep a Pareto
    front of every example, compared choice by choice: a third of a ``ci`` run's time went there.
    """
    token = _STEERING.set(enabled)
    try:
        yield
    finally:
        _STEERING.reset(token)


def safe_target(observation: float, label: str) -> None:
    """``target()`` when a test is running, steering is on, and the label is still free in this
    test case.

    A test may draw two histories; a second ``target()`` with one label would raise, so the first
    one drawn steers the search and later ones are skipped.
    """
    if not currently_in_test_context() or not _STEERING.get():
        return
    try:
        target(observation, label=label)
    except InvalidArgument:
        pass


def label(history: Sequence[Msg], *, prefix: str = "feature") -> Analysis:
    """Report every feature with ``event()`` and steer toward more pairing defects with ``target()``."""
    result = analyse(history)
    if currently_in_test_context():
        for name in sorted(result.features):
            event(f"{prefix}: {name}")
        safe_target(float(result.pairing_defects), PAIRING_TARGET)
    return result


def feature_table(counts: Mapping[str, int], total: int, names: Iterable[str] = FEATURES) -> str:
    """A printable table of how often each feature appeared (printed in the test output)."""
    rows = [f"{'feature':<38} {'count':>6} {'share':>7}"]
    for name in names:
        n = counts.get(name, 0)
        rows.append(f"{name:<38} {n:>6} {100 * n / max(total, 1):>6.1f}%")
    return "\n".join(rows)
