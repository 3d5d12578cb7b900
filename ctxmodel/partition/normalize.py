"""The ``normalize`` cells (contract §3): the visible history cut into turns, each turn classified
by the §3 defects it holds (``normalize:clean``, ``normalize:KIND``, ``normalize:A+B``).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ctxmodel.contract_data import hidden_reasons, tool_use_ids
from ctxmodel.json_types import JsonMessageView as Msg
from ctxmodel.partition.blocks import blocks_of, is_block

__all__ = ["NORMALIZE_CELLS", "NORMALIZE_KINDS", "normalize_cells", "normalize_defects"]

#: The §3 defects, in rule order (§3.1, §3.2, §3.3, §3.4, §3.5, §3.8).
NORMALIZE_KINDS: tuple[str, ...] = ("lead", "dup-result", "missing", "orphan", "dup-use", "other")
NORMALIZE_CELLS: tuple[str, ...] = (
    "normalize:clean",
    *(f"normalize:{k}" for k in NORMALIZE_KINDS),
    *(f"normalize:{a}+{b}" for a, b in itertools.combinations(NORMALIZE_KINDS, 2)),
)

_GOOD_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _other_defect(message: Msg) -> bool:
    """A defect normalization passes through (contract §3.8): an empty or blank text block, empty
    content, a malformed id, a tool_result in an assistant message or a tool_use in a user one."""
    content = message.get("content")
    if content == "" or content == []:
        return True
    for block in blocks_of(message):
        if is_block(block, "text") and isinstance(block.get("text"), str) and not block["text"].strip():
            return True
        if is_block(block, "tool_use"):
            if message.get("role") != "assistant" or not (isinstance(block.get("id"), str)
                                                          and _GOOD_ID.match(block["id"])):
                return True
        if is_block(block, "tool_result"):
            if message.get("role") != "user" or not (isinstance(block.get("tool_use_id"), str)
                                                     and _GOOD_ID.match(block["tool_use_id"])):
                return True
    return False


def normalize_defects(messages: Sequence[Msg]) -> list[tuple[tuple[int, ...], frozenset[str]]]:
    """The turns of the visible history (indices into it) with the §3 defects each holds."""
    visible = [m for m, why in zip(messages, hidden_reasons(messages), strict=True) if why is None]
    at: dict[int, set[str]] = {i: set() for i in range(len(visible))}
    seen: set[Any] = set()
    for i, m in enumerate(visible):
        uses = tool_use_ids(m)
        for u in uses:
            if u in seen:
                at[i].add("dup-use")
            seen.add(u)
        if _other_defect(m):
            at[i].add("other")
        nxt = visible[i + 1] if i + 1 < len(visible) else None
        if uses and nxt is not None:
            got = {b.get("tool_use_id") for b in blocks_of(nxt) if is_block(b, "tool_result")} \
                if nxt.get("role") == "user" else set()
            if any(u not in got for u in uses):
                at[i].add("missing")
        if m.get("role") != "user":
            continue
        prev = visible[i - 1] if i > 0 else None
        valid = set(tool_use_ids(prev)) if prev is not None else set()
        per_id: Counter[Any] = Counter()
        before_other = False
        for block in blocks_of(m):
            if not is_block(block, "tool_result"):
                before_other = True
                continue
            rid = block.get("tool_use_id")
            if rid not in valid:
                at[i].add("orphan")
                continue
            per_id[rid] += 1
            if before_other:
                at[i].add("lead")
        if any(n > 1 for n in per_id.values()):
            at[i].add("dup-result")
    turns: list[tuple[tuple[int, ...], frozenset[str]]] = []
    i = 0
    while i < len(visible):
        if (visible[i].get("role") == "assistant" and i + 1 < len(visible)
                and visible[i + 1].get("role") == "user"):
            turns.append(((i, i + 1), frozenset(at[i] | at[i + 1])))
            i += 2
        else:
            turns.append(((i,), frozenset(at[i])))
            i += 1
    return turns


def _defect_cells(kinds: Iterable[str]) -> set[str]:
    found = [k for k in NORMALIZE_KINDS if k in set(kinds)]
    if not found:
        return {"normalize:clean"}
    if len(found) == 1:
        return {f"normalize:{found[0]}"}
    return {f"normalize:{a}+{b}" for a, b in itertools.combinations(found, 2)}


def normalize_cells(messages: Sequence[Msg]) -> set[str]:
    """The cell of every turn of the visible history."""
    out: set[str] = set()
    for _, kinds in normalize_defects(messages):
        out |= _defect_cells(kinds)
    return out
