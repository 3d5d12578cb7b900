"""OpenAI Responses ``input`` histories (domain §5.7), drawn with the shapes agents store and resend.

An agent on the Responses API without server-side state (``store: false``, or its own session store)
resends every item the model produced: a ``reasoning`` item (its ``id``, a ``summary`` list that is
empty more often than not, ``encrypted_content`` when it asked for it) before the item it produced,
which is a run of parallel ``function_call`` items or an assistant ``message``; the calls' outputs
follow, in any order, sometimes after an assistant message of progress, sometimes a turn later; user
messages as a plain string (the easy input message, no ``type``) or ``input_text`` / ``input_image``
parts; ``system`` and ``developer`` messages, first and mid-way. Items the model produced carry their
``id`` (``fc_``, ``msg_``) when the agent kept them, and none when it rebuilt them; some carry
``status``. Items of types no rule reads (``item_reference``, a web search call) are kept as they are.
The last call may still be in flight. A few histories hold what a buggy store leaves (an output lost,
an output with no call, a reasoning item whose item is gone, a reasoning item without ``summary``),
so "no new violation" is judged on refused inputs too.

Each draw is one history (a list of item dicts, strict JSON), small by default and shrinking toward
one user message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from ctxmodel.strategies.blocks import tool_names
from ctxmodel.strategies.text import chance, pick, texts

__all__ = ["responses_histories"]

Item = dict[str, Any]

_HEX = "0123456789abcdef"
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@st.composite
def _item_id(draw: st.DrawFn, prefix: str, used: set[str]) -> str:
    suffix = draw(st.text(_HEX, min_size=4, max_size=16))
    item_id = f"{prefix}_{suffix}"
    n = 0
    while item_id in used:
        n += 1
        item_id = f"{prefix}_{suffix}{n}"
    used.add(item_id)
    return item_id


@st.composite
def _call_id(draw: st.DrawFn, used: set[str]) -> str:
    suffix = draw(st.text(_ID_ALPHABET, min_size=1, max_size=24))
    call_id = "call_" + suffix
    n = 0
    while call_id in used:
        n += 1
        call_id = f"call_{suffix}{n}"
    used.add(call_id)
    return call_id


@st.composite
def _arguments(draw: st.DrawFn) -> str:
    args: dict[str, Any] = {"path": draw(texts(max_size=30))}
    if draw(chance(20)):
        args["content"] = draw(texts(min_size=300, max_size=2000, kinds=("prose", "code")))
    return json.dumps(args, ensure_ascii=False)


@st.composite
def _reasoning(draw: st.DrawFn, used: set[str], encrypted: bool) -> Item:
    item: Item = {"type": "reasoning", "id": draw(_item_id("rs", used))}
    summary: list[Item] = []
    if draw(chance(35)):
        summary = [{"type": "summary_text", "text": draw(texts(nonblank=True, max_size=300))}
                   for _ in range(draw(st.integers(1, 2)))]
    item["summary"] = summary
    if encrypted:
        body = draw(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=8,
                            max_size=400))
        item["encrypted_content"] = "gAAAAA" + body
    if draw(chance(10)):
        item["content"] = [{"type": "reasoning_text", "text": draw(texts(nonblank=True, max_size=200))}]
    return item


def _keyed(draw: st.DrawFn, item: Item, prefix: str, used: set[str], ids: bool) -> Item:
    """The item with the ``id`` the API gave it (when the agent kept ids) and now and then a ``status``."""
    out: Item = {}
    if ids:
        out["id"] = draw(_item_id(prefix, used))
    out.update(item)
    if ids and draw(chance(30)):
        out["status"] = "completed"
    return out


@st.composite
def _user(draw: st.DrawFn, images: bool) -> Item:
    if draw(chance(50)):
        return {"role": "user", "content": draw(texts(nonblank=True, max_size=600))}
    parts: list[Item] = [{"type": "input_text", "text": draw(texts(nonblank=True, max_size=400))}]
    for _ in range(draw(st.integers(0, 2))):
        if images and draw(chance(40)):
            url = draw(pick(("https://example.com/shot.png", "data:image/png;base64,iVBORw0KGgo" + "A" * 40)))
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        else:
            parts.append({"type": "input_text", "text": draw(texts(max_size=200))})
    item: Item = {"type": "message", "role": "user", "content": parts} if draw(chance(60)) else \
        {"role": "user", "content": parts}
    return item


@st.composite
def _system(draw: st.DrawFn) -> Item:
    role = draw(pick(("system", "developer", "developer")))
    text = draw(texts(nonblank=True, max_size=400))
    if draw(chance(50)):
        return {"role": role, "content": text}
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


@st.composite
def _said(draw: st.DrawFn, used: set[str], ids: bool) -> Item:
    text = draw(texts(nonblank=True, max_size=500))
    if draw(chance(25)):
        return {"role": "assistant", "content": text}
    item: Item = {"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": text, "annotations": []}]}
    return _keyed(draw, item, "msg", used, ids)


@st.composite
def _step(draw: st.DrawFn, used: set[str], max_calls: int, in_flight: bool, reasoning: bool, encrypted: bool,
          ids: bool) -> tuple[list[Item], list[Item]]:
    """One model step: reasoning (when on), parallel calls; and their outputs, returned apart so that
    the caller places them (right after, after a progress message, or a turn later)."""
    out: list[Item] = []
    if reasoning and draw(chance(85)):
        out.append(draw(_reasoning(used, encrypted)))
    n = draw(st.integers(1, max_calls))
    calls = [_keyed(draw, {"type": "function_call", "call_id": draw(_call_id(used)), "name": draw(tool_names()),
                           "arguments": draw(_arguments())}, "fc", used, ids) for _ in range(n)]
    out.extend(calls)
    if in_flight:
        return out, []
    order = draw(st.permutations(range(n))) if n > 1 and draw(chance(30)) else list(range(n))
    outputs: list[Item] = []
    for k in order:
        body: Any = draw(st.one_of(texts(max_size=300), texts(min_size=500, max_size=2000, kinds=("prose", "code"))))
        if draw(chance(15)):
            body = [{"type": "input_text", "text": body}]
        outputs.append({"type": "function_call_output", "call_id": calls[k]["call_id"], "output": body})
    return out, outputs


@st.composite
def _defect(draw: st.DrawFn, items: list[Item], used: set[str]) -> None:
    """What a buggy store leaves: an output lost or orphaned, reasoning left alone or without summary."""
    outputs = [i for i, m in enumerate(items) if m.get("type") == "function_call_output"]
    reasoning = [i for i, m in enumerate(items) if m.get("type") == "reasoning"]
    users = [i for i, m in enumerate(items) if m.get("role") == "user"]
    kind = draw(pick(("lost", "orphan", "alone", "no-summary")))
    if kind == "lost" and outputs:
        del items[draw(pick(outputs))]
    elif kind == "alone" and reasoning:
        i = draw(pick(reasoning))
        if i + 1 < len(items):
            del items[i + 1]
    elif kind == "no-summary" and reasoning:
        del items[draw(pick(reasoning))]["summary"]
    elif users:
        i = draw(pick(users))
        items.insert(i + 1, {"type": "function_call_output", "call_id": draw(_call_id(used)), "output": "stale"})


@st.composite
def responses_histories(
    draw: st.DrawFn,
    *,
    min_turns: int = 1,
    max_turns: int = 4,
    max_steps: int = 3,
    max_calls: int = 4,
    images: bool = True,
    defects: bool = True,
) -> list[Item]:
    """A Responses history: optional instructions, then turns (a user message, steps of reasoning,
    calls and outputs, a closing answer with its reasoning), a reasoning model or not, ids kept or not,
    a last call in flight, or (``defects``) what a buggy store leaves."""
    used: set[str] = set()
    items: list[Item] = []
    reasoning = draw(chance(80))
    encrypted = reasoning and draw(chance(60))
    ids = draw(chance(60))
    if draw(chance(60)):
        items.append(draw(_system()))
    n_turns = draw(st.integers(min_turns, max_turns))
    late: list[Item] = []  # outputs an agent appended after the next user message
    for t in range(n_turns):
        if t and draw(chance(20)):
            items.append(draw(_system()))
        items.append(draw(_user(images)))
        items.extend(late)
        late = []
        long_turn = draw(chance(10))
        n_steps = draw(st.integers(0, 3 * max_steps if long_turn else max_steps))
        last = t == n_turns - 1
        flight = last and draw(chance(20))
        for s in range(n_steps):
            made, outputs = draw(_step(used, max_calls, flight and s == n_steps - 1, reasoning, encrypted, ids))
            items.extend(made)
            where = draw(pick(("next", "next", "next", "after-progress", "late")))
            if where == "after-progress" and outputs:
                items.append(draw(_said(used, ids)))
            if where == "late" and not last and s == n_steps - 1:
                late = outputs
            else:
                items.extend(outputs)
        if not (flight and n_steps) and draw(chance(75)):
            if reasoning and draw(chance(70)):
                items.append(draw(_reasoning(used, encrypted)))
            items.append(draw(_said(used, ids)))
        if draw(chance(5)):
            items.append(draw(pick(({"type": "item_reference", "id": "msg_ref0"},
                                    {"type": "web_search_call", "id": "ws_0", "status": "completed",
                                     "action": {"type": "search", "query": "tsc TS2322"}}))))
    items.extend(late)
    if defects and draw(chance(12)):
        draw(_defect(items, used))
    out: list[Item] = copy.deepcopy(items)
    return out
