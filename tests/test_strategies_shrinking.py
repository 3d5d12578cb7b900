"""Shrinking ends somewhere readable: five broken normalizers, each caught by a history of <= 3 messages.

The normalizer below is a small dict-level reading of contract §3 with the reference policies
(orphans dropped, trailing left, results in ``tool_use`` order, first duplicate wins). Each bug
flag breaks one rule the way field code has broken it; ``_check`` states the rules as the
properties do. Hypothesis's minimal failing history (``find``) must have at most 3 messages: a
first user message, the assistant turn, the user turn.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import find, given, settings

from ctxmodel.codec import dump, load
from ctxmodel.normalize import normalize
from ctxmodel.render import render
from ctxmodel.strategies import histories

Msg = dict[str, Any]
SYNTHETIC = {"content": "Tool execution was interrupted before completion.", "is_error": True}


def _blocks(m: Msg) -> list[Any]:
    return m["content"] if isinstance(m["content"], list) else []


def _uses(m: Msg | None) -> list[str]:
    if m is None or m["role"] != "assistant":
        return []
    return [b["id"] for b in _blocks(m) if b.get("type") == "tool_use"]


def _is_result(b: Any) -> bool:
    return isinstance(b, dict) and b.get("type") == "tool_result"


def toy_normalize(history: list[Msg], bugs: frozenset[str] = frozenset()) -> list[Msg]:
    """Contract §3 for the reference policies, with optional bugs."""
    staged: list[Msg] = []
    seen: set[str] = set()
    for m in history:  # rule 5: a later tool_use with a used id goes (an emptied message too)
        if m["role"] == "assistant" and isinstance(m["content"], list):
            kept = []
            for b in m["content"]:
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    if b["id"] in seen:
                        continue
                    seen.add(b["id"])
                kept.append(b)
            if not kept and m["content"]:
                continue
            m = {**m, "content": kept}
        staged.append(m)
    out: list[Msg] = []
    for m in staged:
        prev = out[-1] if out else None
        wanted = _uses(prev)
        if m["role"] == "assistant":
            if wanted:  # rule 3: the previous tool_use turn had no user message after it
                out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": t, **SYNTHETIC}
                                                        for t in wanted]})
            out.append(m)
            continue
        content = m["content"]
        if isinstance(content, str):
            if not wanted:
                out.append(m)
                continue
            content = [{"type": "text", "text": content}]
        results = [b for b in content if _is_result(b)]
        others = [b for b in content if not _is_result(b)]
        if "drop-after-image" in bugs:
            first_image = next((k for k, b in enumerate(content) if b.get("type") == "image"), len(content))
            results = [b for b in content[:first_image] if _is_result(b)]
        found: dict[str, list[Any]] = {}
        for b in results:
            if b.get("tool_use_id") in wanted:
                found.setdefault(b["tool_use_id"], []).append(b)
        if "wrong-id" in bugs:  # pairs results with ids by position, not by id
            valid = [b for b in results if b.get("tool_use_id") in wanted]
            found = {t: [{**b, "tool_use_id": t}] for t, b in zip(wanted, valid, strict=False)}
        new: list[Any] = []
        for t in wanted:
            got = found.get(t, [])
            if got:
                new.extend(got if "keep-duplicates" in bugs else got[:1])
            elif "no-synthesis" not in bugs:
                new.append({"type": "tool_result", "tool_use_id": t, **SYNTHETIC})
        blocks = new + others
        if not blocks and content:
            continue
        changed = blocks != m["content"]
        if "forget-metadata" in bugs and changed:
            out.append({"role": "user", "content": blocks})
        else:
            out.append({**m, "content": blocks})
    return out


def _check(history: list[Msg], result: list[Msg]) -> str | None:
    """The first broken rule of contract §3 (1, 2, 4, 5, 6), or None."""
    first_use: dict[str, int] = {}  # rule 5: only the first tool_use of an id keeps results
    for k, m in enumerate(history):
        for t in _uses(m):
            first_use.setdefault(t, k)
    inputs: dict[str, list[Any]] = {}
    for k, m in enumerate(history):
        for b in _blocks(m):
            if _is_result(b) and m["role"] == "user" and k and first_use.get(b["tool_use_id"]) == k - 1:
                inputs.setdefault(b["tool_use_id"], []).append({x: b.get(x) for x in ("content", "is_error")})
    all_uses: list[str] = [t for m in result for t in _uses(m)]
    if len(all_uses) != len(set(all_uses)):
        return "rule 5: tool_use ids repeat"
    for n, m in enumerate(result):
        wanted = _uses(m)
        if wanted and n + 1 < len(result):
            nxt = result[n + 1]
            lead: list[str] = []
            for b in _blocks(nxt) if nxt["role"] == "user" else []:
                if not _is_result(b):
                    break
                lead.append(b["tool_use_id"])
            if sorted(lead) != sorted(wanted):
                return f"rule 1: messages.{n + 1} does not start with one result per tool_use"
        if m["role"] == "user":
            for b in _blocks(m):
                if not _is_result(b):
                    continue
                tid = b["tool_use_id"]
                if n == 0 or tid not in _uses(result[n - 1]):
                    return f"rule 4: orphan {tid} kept"
                body = {x: b.get(x) for x in ("content", "is_error")}
                if tid in inputs and body not in inputs[tid]:
                    return f"rule 2: the result for {tid} is not one of its valid input results"
    metas = [json.dumps({k: v for k, v in m.items() if k != "content"}, sort_keys=True) for m in result]
    for m in history:
        keeps = isinstance(m["content"], str) or any(b.get("type") in ("text", "image") for b in _blocks(m))
        meta = {k: v for k, v in m.items() if k != "content"}
        if keeps and len(meta) > 1 and json.dumps(meta, sort_keys=True) not in metas:
            return "rule 6: metadata lost"
    return None


BUGS = ("keep-duplicates", "drop-after-image", "wrong-id", "no-synthesis", "forget-metadata")
SHRINK = settings(max_examples=2000, derandomize=True, database=None)


@pytest.mark.parametrize("bug", BUGS)
def test_a_broken_normalizer_fails_on_a_history_of_at_most_three_messages(bug: str) -> None:
    found = find(histories(), lambda h: _check(h, toy_normalize(h, frozenset({bug}))) is not None, settings=SHRINK)
    print(f"\n{bug}: {_check(found, toy_normalize(found, frozenset({bug})))}\n{render(load(found))}",
          file=sys.__stdout__, flush=True)
    assert len(found) <= 3
    ids = [b["id"] for m in found for b in _blocks(m) if b.get("type") == "tool_use"]
    assert all(len(t) <= len("toolu_a2") for t in ids), ids  # ids shrink toward toolu_a


@settings(max_examples=200, derandomize=True, database=None)
@given(histories())
def test_the_checker_accepts_the_correct_toy_and_the_reference(history: list[Msg]) -> None:
    """The checker is neither vacuous nor stricter than the contract: both correct normalizers pass."""
    assert _check(history, toy_normalize(history)) is None
    assert _check(history, dump(normalize(load(history)))) is None
