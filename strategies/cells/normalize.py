"""``normalize_histories()``: a stored history without pairing defects, then per turn a cell of
``normalize`` (clean, one §3 defect, or two) and the defects injected into that turn.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from ctxmodel import partition
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.blocks import image_blocks, tool_result_blocks
from ctxmodel.strategies.cells.fresh import GUARD, ONCE, first_choices
from ctxmodel.strategies.cells.pieces import (
    TAGS,
    ids_in,
    labelled,
    marker_message,
    summary_message,
    tool_call,
    unmarked,
)
from ctxmodel.strategies.histories import histories, passthrough_defects
from ctxmodel.strategies.ids import make_unique
from ctxmodel.strategies.labels import visibility
from ctxmodel.strategies.text import chance, memo, pick, texts

__all__ = ["normalize_histories"]


# -- normalize -------------------------------------------------------------------------------------


@memo
def _clean_histories() -> st.SearchStrategy[list[Msg]]:
    """Histories without any pairing defect nor overlay (the families that make defects switched off)."""
    return histories(
        min_turns=1, max_turns=6, max_calls=2, orphans=False, duplicate_results=False, duplicate_tool_uses=False,
        missing_results=False, interleave=False, split_pairs=False, consecutive_roles=False, bad_ids=False,
        defects=False, summaries=False, truncations=False, dangling_parents=False,
    )


@memo
def _hidden_histories() -> st.SearchStrategy[list[Msg]]:
    """Short histories of any shape, to be hidden."""
    return histories(max_turns=2, max_calls=2)


def _calls(a: Msg) -> list[str]:
    return [b["id"] for b in _as_list(a) if isinstance(b, dict) and b.get("type") == "tool_use"]


def _as_list(message: Msg) -> list[Any]:
    """The message's content as a list of blocks (string content becomes one text block), in place."""
    if not isinstance(message["content"], list):
        message["content"] = [{"type": "text", "text": message["content"]}] if message["content"] else []
    content: list[Any] = message["content"]
    return content


def _results_at(u: Msg) -> list[int]:
    return [k for k, b in enumerate(_as_list(u)) if isinstance(b, dict) and b.get("type") == "tool_result"]


def _short_texts() -> st.SearchStrategy[str]:
    return texts(min_size=1, max_size=40, nonblank=True)


def _add_call(draw: st.DrawFn, a: Msg, u: Msg, used: set[str]) -> None:
    """One more call in the turn, its result right after the others."""
    tid = make_unique("toolu_n", used)
    _as_list(a).append(tool_call(draw, tid))
    results = _results_at(u)
    _as_list(u).insert(results[-1] + 1 if results else 0,
                       {"type": "tool_result", "tool_use_id": tid, "content": draw(_short_texts())})


def _rename(blocks: list[Any], old: str, new: str) -> None:
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") == old:
            b["id"] = new
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == old:
            b["tool_use_id"] = new


def _inject(draw: st.DrawFn, kinds: frozenset[str], a: Msg | None, u: Msg | None, ctx: dict[str, Any]) -> None:
    """Put the §3 defects ``kinds`` into one turn: an assistant message ``a`` and the user message ``u``
    after it (``a`` None: a user message alone; ``u`` None: an assistant message alone)."""
    used: set[str] = ctx["used"]
    earlier: list[str] = ctx["earlier"]
    if a is not None and u is not None and kinds & {"lead", "dup-result", "missing", "dup-use"}:
        need = 1 + ("missing" in kinds and bool(kinds & {"lead", "dup-result", "dup-use"}))
        while len(_calls(a)) < need:
            _add_call(draw, a, u, used)
    if "dup-use" in kinds and a is not None:  # §3.5: an id used earlier in the request, or twice here
        calls = _calls(a)
        if calls and earlier and u is not None and draw(chance(70)):
            old = calls[draw(st.integers(0, len(calls) - 1))]
            _rename(_as_list(a) + _as_list(u), old, earlier[draw(st.integers(0, len(earlier) - 1))])
        else:
            uses = [b for b in _as_list(a) if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not uses:
                uses = [tool_call(draw, make_unique("toolu_n", used))]
                _as_list(a).append(uses[0])
            _as_list(a).append(copy.deepcopy(uses[draw(st.integers(0, len(uses) - 1))]))
    if "missing" in kinds and a is not None and u is not None:  # §3.3: a call without its result
        calls = _calls(a)
        gone = calls[draw(st.integers(0, len(calls) - 1))]
        u["content"] = [b for b in _as_list(u) if not (isinstance(b, dict) and b.get("tool_use_id") == gone)]
        if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in u["content"]) and draw(chance(60)):
            # No result at all: the user's reply, or a denied call's feedback, stored as a string (§3.6).
            u["content"] = draw(texts(min_size=1, max_size=60, nonblank=True))
        elif not u["content"]:
            u["content"] = [{"type": "text", "text": "ok"}]
    if "dup-result" in kinds and u is not None:  # §3.2: a second valid result for one call
        results = _results_at(u)
        if results:
            k = results[draw(st.integers(0, len(results) - 1))]
            twin = copy.deepcopy(u["content"][k])
            if draw(chance(50)):
                twin["content"] = draw(_short_texts())
            u["content"].insert(k + 1, twin)
    if "lead" in kinds and u is not None:  # §3.1: a block before (or between) the results
        results = _results_at(u)
        if results:
            block = draw(image_blocks()) if draw(chance(30)) else {"type": "text", "text": draw(_short_texts())}
            at = results[0] if len(results) < 2 or draw(chance(50)) else results[draw(st.integers(1, len(results) - 1))]
            u["content"].insert(at, block)
    if "orphan" in kinds and u is not None:  # §3.4: a result whose call is not the message before
        taken = set(_calls(a)) if a is not None else set()
        hidden: list[str] = ctx["hidden"]
        source = hidden if len(hidden) > 0 and draw(chance(40)) else earlier
        pool = [i for i in source if i not in taken]
        if len(pool) > 0 and draw(chance(60)):
            oid = pool[draw(st.integers(0, len(pool) - 1))]
        else:
            oid = make_unique("toolu_gone", used)
        # Any content a result may hold (string, text items, an image, none): what §3.4 keeps of an
        # orphan depends on the form, so a to_text that handles strings only must meet the others.
        orphan = draw(tool_result_blocks(oid, text=texts(max_size=40)))
        if not taken and draw(chance(35)):
            u["content"] = [orphan]  # nothing but orphans: the message normalization empties (§3.6)
        else:
            content = _as_list(u)
            content.insert(draw(st.integers(0, len(content))), orphan)
    if "other" in kinds:  # §3.8: a defect normalization passes through
        _other(draw, a, u, used)


def _other(draw: st.DrawFn, a: Msg | None, u: Msg | None, used: set[str]) -> None:
    where = [m for m in (a, u) if m is not None]
    m = where[draw(st.integers(0, len(where) - 1))]
    variant = draw(st.integers(0, 4))
    if variant == 0:
        _as_list(m).append({"type": "text", "text": ""})
    elif variant == 1:
        _as_list(m).append({"type": "text", "text": draw(pick((" ", "\n\n", "\t ")))})
    elif variant == 2 and a is not None:
        _as_list(a).append({"type": "tool_result", "tool_use_id": make_unique("toolu_misplaced", used), "content": "x"})
    elif variant == 3 and a is not None and _calls(a):
        old = _calls(a)[0]
        _rename(_as_list(a) + (_as_list(u) if u is not None else []), old, make_unique("toolu_.bad", used))
    elif a is None or not _calls(a):
        if not any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in _as_list(m)):
            m["content"] = draw(pick(("", [])))
        else:
            _as_list(m).append({"type": "text", "text": ""})
    else:
        _as_list(m).append({"type": "text", "text": ""})


def _turns(messages: list[Msg]) -> list[tuple[Msg | None, Msg | None]]:
    """The turns of an alternating history: (assistant, the user message after it), or one alone."""
    out: list[tuple[Msg | None, Msg | None]] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.get("role") == "assistant" and i + 1 < len(messages) and messages[i + 1].get("role") == "user":
            out.append((m, messages[i + 1]))
            i += 2
        elif m.get("role") == "assistant":
            out.append((m, None))
            i += 1
        else:
            out.append((None, m))
            i += 1
    return out


#: What a message alone can hold: a user message without the call before it, an assistant message
#: whose next message is not a user one (the last, pending).
_ALONE = {"user": frozenset({"orphan", "other"}), "assistant": frozenset({"other", "dup-use"})}


#: Turns given a cell each (a history has fewer; shrinking clears them to "clean").
_MAX_TURNS = 10


@st.composite
def _normalize(draw: st.DrawFn, cells: tuple[frozenset[str], ...], generic_percent: int) -> list[Msg]:
    # The first tool turn's cell is drawn without replacement in half the examples (as a recover
    # request's pattern is, ``cells.recover``), the next two turns take the cells after it; the other
    # turns' are drawn at random.
    once, first = draw(first_choices(2, len(cells)))
    draw(ONCE if once == 0 else GUARD)
    if once == 1 and draw(chance(min(100, 2 * generic_percent))):
        return copy.deepcopy(draw(histories()))  # only among the random half: the other half is stratified
    wanted = [*((first + k) % len(cells) for k in range(3)),
              *(draw(st.integers(0, len(cells) - 1)) for _ in range(_MAX_TURNS - 3))]
    msgs = copy.deepcopy(draw(_clean_histories()))
    used = ids_in(msgs)
    prefix: list[Msg] = []
    if draw(chance(30)):
        prefix = unmarked(draw(_hidden_histories()))
        used |= ids_in(prefix)
    ctx: dict[str, Any] = {"used": used, "earlier": [], "hidden": sorted(ids_in(prefix))}
    full = 0
    for a, u in _turns(msgs):
        if a is not None and u is not None:
            kinds = cells[wanted[full % _MAX_TURNS]]
            full += 1
        else:  # a message alone holds only some defects: the nearest cell it can
            kinds = cells[draw(st.integers(0, len(cells) - 1))] & _ALONE["user" if a is None else "assistant"]
        if kinds:
            _inject(draw, kinds, a, u, ctx)
        if a is not None:
            ctx["earlier"].extend(i for i in _calls(a) if isinstance(i, str))
    if draw(chance(20)):
        # Defects normalization passes through (an empty message, an empty or blank text, a result in
        # an assistant message, an assistant first), next to the turns' pairing defects (§3.8).
        draw(passthrough_defects(msgs))
    # Hidden messages around the visible turns (contract §3 is judged on what is sent).
    start = 0
    if prefix:
        if draw(chance(70)):
            for m in prefix:
                m["condenseParent"] = "cond-n"
        msgs = [*prefix, summary_message("cond-n"), *msgs]
        start = len(prefix) + 1
    boundaries = [i for i in range(start + 1, len(msgs)) if msgs[i].get("role") == "assistant"]
    if len(boundaries) > 0 and draw(chance(25)):
        at = boundaries[draw(st.integers(0, len(boundaries) - 1))]
        run = unmarked(draw(_hidden_histories()))
        for m in run:
            m["truncationParent"] = "trunc-n"
        marker = marker_message("trunc-n", len(run), "assistant" if draw(chance(20)) else "user")
        msgs = [*msgs[:at], *run, marker, *msgs[at:]]
    if draw(chance(15)):
        hidden = visibility(msgs)
        for i, m in enumerate(msgs):
            if hidden[i] is None and m.get("isSummary") is not True and draw(chance(25)):
                m.setdefault(draw(pick(TAGS)), "gone")
    return msgs


def normalize_histories(
    *, cells: Sequence[str] | None = None, generic_percent: int = 25
) -> st.SearchStrategy[list[Msg]]:
    """Stored histories whose turns each hold a chosen ``normalize`` cell: a clean turn, one §3 defect
    alone, or two together (``normalize:orphan+missing``). ``generic_percent`` of the draws are plain
    ``histories()`` (every broken shape of the field, its own mix of defects)."""
    chosen = tuple(cells) if cells is not None else partition.NORMALIZE_CELLS
    unknown = [c for c in chosen if c not in partition.NORMALIZE_CELLS]
    if unknown or not chosen:
        raise ValueError(
            f"normalize_histories: unknown cell(s) {unknown}; expected some of {partition.NORMALIZE_CELLS}")
    kinds = tuple(frozenset() if c == "normalize:clean" else frozenset(c.partition(":")[2].split("+")) for c in chosen)
    return labelled("normalize", _normalize(kinds, generic_percent))
