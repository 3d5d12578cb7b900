"""Stored histories, broken the ways the field breaks them, and the well-formed ones (contract §1-§3).

Both strategies build a history *by construction* from turns -- a first user message, then for each
turn an assistant message with k tool calls and a user message holding their results, arranged or
perturbed -- never by ``filter``. The turns are drawn first, as one list, so shrinking deletes whole
turns; every perturbation is an independent ``chance()`` that shrinks to "off"; overlays (condense,
truncation, timestamps, defects) are drawn last and shrink away the same way. A failing example
therefore ends as a couple of messages with ids like ``toolu_a`` and one-letter text.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import attrs
from hypothesis import strategies as st

from ctxmodel.contract_data import marker_text
from ctxmodel.json_types import JsonBlock as Block
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.blocks import (
    RESULT_FORMS,
    image_blocks,
    meta_extras,
    redacted_thinking_blocks,
    text_blocks,
    thinking_blocks,
    tool_result_blocks,
    tool_use_blocks,
    unknown_blocks,
)
from ctxmodel.strategies.ids import ID_STYLES, make_unique, tool_ids
from ctxmodel.strategies.labels import label, visibility
from ctxmodel.strategies.text import chance, memo, pick, texts

__all__ = ["SUMMARY_PREFIX", "TS_BASE", "histories", "marker_text", "passthrough_defects", "well_formed_histories"]

TS_BASE = 1_700_000_000_000
SUMMARY_PREFIX = "Summary of the conversation so far: "


#: Drawn first in every turn and call: 0 (where shrinking drives it) drops the whole turn or call.
#: The shrinker zeroes one choice at a time far more readily than it deletes a leading list element,
#: so this is what lets a failing example lose the turns before the one that matters.
_KEEP = st.integers(0, 15).map(bool)


@attrs.frozen
class _Knobs:
    min_turns: int
    max_turns: int
    max_calls: int
    orphans: bool
    duplicate_results: bool
    duplicate_tool_uses: bool
    missing_results: bool
    interleave: bool
    reorder: bool
    result_forms: tuple[str, ...]
    is_error: bool
    summaries: bool
    legacy_summaries: bool
    truncations: bool
    legacy_markers: bool
    dangling_parents: bool
    split_pairs: bool
    string_content: bool
    consecutive_roles: bool
    trailing_tool_use: bool
    thinking: bool
    images: bool
    unknown_blocks: bool
    unknown_keys: bool
    id_styles: tuple[str, ...]
    bad_ids: bool
    defects: bool
    big_results: bool
    timestamps: bool
    text: st.SearchStrategy[str]


@attrs.frozen
class _Call:
    raw_id: str
    use: Block
    result: Block
    has_result: bool
    dup_result: Block | None
    reuse_earlier: int | None
    dup_in_message: bool


@attrs.frozen
class _Turn:
    a_pre: list[Block]
    calls: list[_Call]
    split_assistant: bool
    perm: list[int]
    inserts: list[tuple[int, Block]]
    u_pre: list[Block]
    u_post: list[Block]
    orphans: list[tuple[str, int, Block]]
    user_split: int  # 0 none; 1 a user text message before the results; 2 results split over two messages
    user_string: str | None
    no_user: bool
    a_meta: dict[str, Any]
    u_meta: dict[str, Any]
    keep: bool


@memo
def _result_text(k: _Knobs) -> st.SearchStrategy[str]:
    """Result bodies: may be empty (the API takes it), sometimes oversized (recovery, contract §4.5)."""
    small = texts()
    if not k.big_results:
        return small
    return st.integers(0, 99).flatmap(lambda n: texts(min_size=2000, max_size=20_000) if n >= 92 else small)


@memo
@st.composite
def _call(draw: st.DrawFn, k: _Knobs) -> _Call | None:
    if not draw(_KEEP):
        return None
    raw_id = draw(tool_ids(styles=k.id_styles, bad=k.bad_ids))
    extra = 4 if k.unknown_keys else 0
    use = draw(tool_use_blocks("", extra_percent=extra))
    body = _result_text(k)
    result = draw(tool_result_blocks("", forms=k.result_forms, is_error=k.is_error, text=body, extra_percent=extra))
    # A missing result is the *smaller* choice (0): fewer blocks is simpler, so a failing example
    # that needs a missing result can reach it by lowering one choice, from any starting point.
    has_result = not k.missing_results or draw(st.integers(0, 99)) >= 15
    dup = None
    if k.duplicate_results and draw(chance(8)):
        dup = draw(tool_result_blocks("", forms=k.result_forms, is_error=k.is_error, text=k.text))
    reuse = draw(st.integers(0, 7)) if k.duplicate_tool_uses and draw(chance(5)) else None
    dup_in_message = k.duplicate_tool_uses and draw(chance(4))
    return _Call(raw_id, use, result, has_result, dup, reuse, dup_in_message)


@memo
@st.composite
def _turn(draw: st.DrawFn, k: _Knobs) -> _Turn:
    keep = draw(_KEEP)
    # The turn's perturbations are decided before its calls: Hypothesis shrinks earlier choices
    # first, so a failing example drops a perturbation that does not matter (an extra user message,
    # say) rather than the call-level defect that does (a missing result).
    user_split = draw(pick((1, 2))) if k.consecutive_roles and draw(chance(10)) else 0
    # A turn with no user message: its calls are followed straight by the next assistant message,
    # where normalization must insert a user message (contract §3.3).
    no_user = k.consecutive_roles and draw(chance(12))
    split_flag = k.consecutive_roles and draw(chance(10))
    orphan_flag = k.orphans and draw(chance(14))
    interleave_flag = k.interleave and draw(chance(25))
    u_pre_flag = k.interleave and draw(chance(5))
    reorder_flag = k.reorder and draw(chance(20))
    calls = [c for c in draw(st.lists(_call(k), max_size=k.max_calls)) if c is not None]
    extra = 4 if k.unknown_keys else 0
    a_pre: list[Block] = []
    if k.thinking and draw(chance(12)):
        a_pre.append(draw(redacted_thinking_blocks() if draw(chance(30)) else thinking_blocks()))
    if not calls or draw(chance(40)):
        a_pre.append(draw(text_blocks(text=k.text, extra_percent=extra)))
    if k.unknown_blocks and draw(chance(6)):
        a_pre.insert(0, draw(unknown_blocks("assistant")))
    n_results = sum(1 + (c.dup_result is not None) for c in calls if c.has_result)
    perm = list(range(n_results))
    if reorder_flag and n_results >= 2:
        perm = draw(_permutations(n_results))
    inserts: list[tuple[int, Block]] = []
    if interleave_flag and calls:
        for _ in range(draw(st.integers(1, 2))):
            block = draw(image_blocks()) if k.images and draw(st.booleans()) else draw(text_blocks(text=k.text))
            inserts.append((draw(st.integers(0, 6)), block))
    u_pre: list[Block] = []
    if u_pre_flag and calls:
        u_pre.append(draw(text_blocks(text=k.text)))
    u_post: list[Block] = []
    if not calls or draw(chance(35)):
        u_post.append(draw(text_blocks(text=k.text, extra_percent=extra)))
    if k.images and draw(chance(8)):
        u_post.append(draw(image_blocks()))
    if k.unknown_blocks and draw(chance(4)):
        u_post.append(draw(unknown_blocks("user")))
    orphans: list[tuple[str, int, Block]] = []
    if orphan_flag:
        kind = draw(pick(("two-back", "unknown")))
        orphans.append((kind, draw(st.integers(0, 4)),
                        draw(tool_result_blocks("", forms=k.result_forms, is_error=k.is_error, text=k.text))))
    user_string = None
    if k.string_content and not calls and draw(chance(30)):
        user_string = draw(texts(nonblank=True))
    a_meta = draw(meta_extras(5)) if k.unknown_keys else {}
    u_meta = draw(meta_extras(5)) if k.unknown_keys else {}
    split_assistant = split_flag and bool(a_pre) and bool(calls)
    return _Turn(a_pre, calls, split_assistant, perm, inserts, u_pre, u_post, orphans, user_split, user_string,
                 no_user, a_meta, u_meta, keep)


def _kept(turns: Sequence[Any], min_turns: int) -> list[Any]:
    """The turns whose keep flag is set, or the first ``min_turns`` when that leaves too few."""
    kept = [t for t in turns if t.keep]
    return kept if len(kept) >= min_turns else list(turns[:min_turns])


def _insert_at(items: list[Block], pos: int, block: Block) -> None:
    items.insert(pos % (len(items) + 1), block)


def _build_turns(first: Msg, turns: Sequence[_Turn]) -> list[Msg]:
    """Turn plans into messages; ids are made unique here unless a plan asks for a duplicate."""
    msgs: list[Msg] = [first]
    used: set[str] = set()
    all_ids: list[str] = []
    turn_ids: list[list[str]] = []
    for turn in turns:
        ids: list[str] = []
        uses: list[Block] = []
        for c in turn.calls:
            if c.reuse_earlier is not None and all_ids:
                tid = all_ids[c.reuse_earlier % len(all_ids)]
            else:
                tid = make_unique(c.raw_id, used)
            ids.append(tid)
            uses.append({**c.use, "id": tid})
            if c.dup_in_message:
                uses.append({**copy.deepcopy(c.use), "id": tid})
        results: list[Block] = []
        for c, tid in zip(turn.calls, ids, strict=True):
            if c.has_result:
                results.append({**c.result, "tool_use_id": tid})
                if c.dup_result is not None:
                    results.append({**c.dup_result, "tool_use_id": tid})
        results = [results[i] for i in turn.perm] if len(turn.perm) == len(results) else results
        for kind, pos, block in turn.orphans:
            back = turn_ids[-1] if turn_ids and turn_ids[-1] and kind == "two-back" else []
            oid = back[pos % len(back)] if back else make_unique("toolu_gone", used)
            _insert_at(results, pos, {**block, "tool_use_id": oid})
        all_ids.extend(ids)
        turn_ids.append(ids)
        for pos, block in turn.inserts:
            _insert_at(results, pos, block)
        assistant = list(turn.a_pre) + uses
        if turn.split_assistant:
            msgs.append({"role": "assistant", "content": list(turn.a_pre), **turn.a_meta})
            msgs.append({"role": "assistant", "content": uses})
        else:
            msgs.append({"role": "assistant", "content": assistant, **turn.a_meta})
        if turn.no_user:
            continue
        user_content: list[Block] = list(turn.u_pre) + results + list(turn.u_post)
        if turn.user_split == 1:
            msgs.append({"role": "user", "content": [{"type": "text", "text": "wait"}]})
        if turn.user_split == 2 and len(results) >= 2:
            half = len(results) // 2
            msgs.append({"role": "user", "content": results[:half]})
            user_content = list(turn.u_pre) + results[half:] + list(turn.u_post)
        if turn.user_string is not None and not results:
            msgs.append({"role": "user", "content": turn.user_string, **turn.u_meta})
        else:
            msgs.append({"role": "user", "content": user_content or [{"type": "text", "text": "ok"}], **turn.u_meta})
    return msgs


@memo
@st.composite
def _first_message(draw: st.DrawFn, k: _Knobs) -> Msg:
    if k.string_content and draw(chance(25)):
        return {"role": "user", "content": draw(texts(nonblank=True))}
    content: list[Block] = [draw(text_blocks(text=texts(nonblank=True)))]
    if k.images and draw(chance(10)):
        content.append(draw(image_blocks()))
    return {"role": "user", "content": content}


def _tool_use_index(msgs: Sequence[Msg], upto: int) -> int | None:
    """The last assistant message with a ``tool_use`` before ``upto`` (for cuts that split a pair)."""
    for i in range(min(upto, len(msgs)) - 1, -1, -1):
        m = msgs[i]
        if m.get("role") == "assistant" and isinstance(m.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") == "tool_use" for b in m["content"]):
            return i
    return None


def _condense(draw: st.DrawFn, msgs: list[Msg], k: _Knobs, n: int) -> None:
    """A condense in the v2 shape (domain §3.4): everything before the cut is tagged, the summary follows.

    With ``split_pairs`` the cut may fall between a ``tool_use`` and its results, which leaves an
    orphan after the condense (contract §3.4; domain §2.1 Branch A).
    """
    cut = draw(st.integers(0, len(msgs)))
    if k.split_pairs and draw(chance(50)):
        at = _tool_use_index(msgs, len(msgs) - 1 if cut == 0 else cut)
        if at is not None and at + 1 < len(msgs):
            cut = at + 1
    cid = f"cond-{n}"
    for m in msgs[:cut]:
        m.setdefault("condenseParent", cid)
    legacy = k.legacy_summaries and draw(chance(25))
    summary: Msg = {"role": "assistant" if legacy else "user",
                    "content": [{"type": "text", "text": SUMMARY_PREFIX + draw(texts(nonblank=True))}],
                    "isSummary": True, "condenseId": cid}
    msgs.insert(cut, summary)


def _truncate(draw: st.DrawFn, msgs: list[Msg], k: _Knobs, n: int, dangling_ok: bool) -> None:
    """A sliding-window truncation (domain §3.3): tag visible messages, insert one marker.

    The first visible message is never tagged, markers never are (contract §4.3); the marker may be
    the legacy assistant-role one at position 1, or missing (a rewind deleted it: dangling tags).
    """
    hidden = visibility(msgs)
    vis = [i for i, h in enumerate(hidden) if h is None and msgs[i].get("isTruncationMarker") is not True]
    if len(vis) < 2:
        return
    s = 1 + draw(st.integers(0, len(vis) - 2))
    e = s + 1 + draw(st.integers(0, len(vis) - s - 1))
    if k.split_pairs and draw(chance(40)):
        for j in range(s + 1, len(vis)):
            at = _tool_use_index(msgs, vis[j])
            if at == vis[j - 1]:
                e = j
                break
    tid = f"trunc-{n}"
    for i in vis[s:e]:
        msgs[i]["truncationParent"] = tid
    if dangling_ok and draw(chance(35)):
        return  # the marker was deleted by a rewind: its tags now hide nothing (contract §2)
    marker: Msg = {"role": "user", "content": marker_text(e - s), "isTruncationMarker": True, "truncationId": tid}
    if k.legacy_markers and draw(chance(30)):
        marker["role"] = "assistant"
        msgs.insert(1, marker)
        return
    msgs.insert(vis[e] if e < len(vis) else len(msgs), marker)


def _defects(draw: st.DrawFn, msgs: list[Msg], which: Sequence[bool]) -> None:
    """Defects normalization passes through for the oracle (contract §3.8), each independently."""
    empty_text, whitespace, empty_message, misplaced, leading = which
    if empty_text:
        m = msgs[draw(st.integers(0, len(msgs) - 1))]
        if isinstance(m["content"], list):
            m["content"].append({"type": "text", "text": ""})
        else:
            m["content"] = [{"type": "text", "text": ""}]
    if whitespace:
        m = msgs[draw(st.integers(0, len(msgs) - 1))]
        m["content"] = [{"type": "text", "text": draw(pick((" ", "\n\n", "\t ")))}]
    if empty_message:
        msgs[draw(st.integers(0, len(msgs) - 1))]["content"] = draw(pick(("", [])))
    if misplaced:
        at = draw(st.integers(0, len(msgs) - 1))
        msgs.insert(at + 1, {"role": "assistant", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_misplaced", "content": "x"}]})
    if leading:
        msgs.insert(0, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]})


@st.composite
def passthrough_defects(draw: st.DrawFn, msgs: list[Msg], percent: int = 35) -> None:
    """Some of the defects normalization must pass through (contract §3.8), each at ``percent``%, at
    least one: for a history built without them (the normalize cells), where they would otherwise
    never meet a pairing defect in the same history."""
    which = [draw(chance(percent)) for _ in range(5)]
    if not any(which):
        which[draw(st.integers(0, 4))] = True
    _defects(draw, msgs, which)


def _timestamps(msgs: list[Msg]) -> None:
    for i, m in enumerate(msgs):
        m["ts"] = TS_BASE + 1000 * i


@memo
@st.composite
def _histories(draw: st.DrawFn, k: _Knobs) -> list[Msg]:
    # Whole-history overlays are decided first: Hypothesis shrinks earlier choices first, so a
    # failing example sheds condense, truncation and defects before it simplifies the turns.
    # Rates are set so each shape meets a 60-example ci run a few times even though Hypothesis
    # repeats itself there (a trailing call is what a trailing-policy bug needs). Only the
    # odds change, never the draws.
    trailing = k.trailing_tool_use and draw(chance(20))
    condenses = [k.summaries and draw(chance(p)) for p in (30, 40)]
    truncations = [k.truncations and draw(chance(p)) for p in (30, 25)]
    rewound = k.dangling_parents and draw(chance(10))
    defects = [k.defects and draw(chance(6)) for _ in range(5)]
    first = draw(_first_message(k))
    drawn = draw(st.lists(_turn(k), min_size=k.min_turns, max_size=k.max_turns))
    msgs = _build_turns(first, _kept(drawn, k.min_turns))
    if trailing:
        used = {str(b.get("id")) for m in msgs if isinstance(m["content"], list) for b in m["content"]}
        calls = draw(st.lists(tool_ids(styles=k.id_styles, bad=False), min_size=1, max_size=2))
        ids = [make_unique(c, used) for c in calls]
        msgs.append({"role": "assistant", "content": [{**draw(tool_use_blocks("")), "id": t} for t in ids]})
    for n, on in enumerate(condenses):
        if on and (n == 0 or condenses[0]):
            _condense(draw, msgs, k, n + 1)
    for n, on in enumerate(truncations):
        if on and (n == 0 or truncations[0]):
            _truncate(draw, msgs, k, n + 1, k.dangling_parents)
    if rewound:
        a = draw(st.integers(0, len(msgs) - 1))
        msgs[a].setdefault("condenseParent", "cond-rewound")
    if any(defects):
        _defects(draw, msgs, defects)
    if k.timestamps and draw(chance(50)):
        _timestamps(msgs)
    out = copy.deepcopy(msgs)  # no aliasing between blocks: a mutating target shows up as one change
    label(out)
    return out


def histories(
    *,
    min_turns: int = 0,
    max_turns: int = 6,
    max_calls: int = 4,
    orphans: bool = True,
    duplicate_results: bool = True,
    duplicate_tool_uses: bool = True,
    missing_results: bool = True,
    interleave: bool = True,
    reorder: bool = True,
    result_forms: Sequence[str] = RESULT_FORMS,
    is_error: bool = True,
    summaries: bool = True,
    legacy_summaries: bool = True,
    truncations: bool = True,
    legacy_markers: bool = True,
    dangling_parents: bool = True,
    split_pairs: bool = True,
    string_content: bool = True,
    consecutive_roles: bool = True,
    trailing_tool_use: bool = True,
    thinking: bool = True,
    images: bool = True,
    unknown_blocks: bool = True,
    unknown_keys: bool = True,
    id_styles: Sequence[str] = ID_STYLES,
    bad_ids: bool = True,
    defects: bool = True,
    big_results: bool = True,
    timestamps: bool = True,
    text: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Arbitrary stored histories (contract §1), every broken shape of the field on by default.

    Each keyword switches one family of shapes off: orphans pointing two turns back
    or nowhere (``orphans``), orphans left by a condense or truncation cutting a pair
    (``split_pairs``), duplicates, missing results, images and text between results
    (``interleave``), result content forms, condense summaries and truncation markers (with legacy
    assistant-role variants and dangling parents after a rewind), string content, consecutive
    same-role messages, a trailing ``tool_use``, thinking blocks, unknown blocks and keys, every id
    style and bad ids, and the defects normalization passes through (``defects``). ``text`` replaces
    the strategy for short text bodies. Every example is labelled with ``event()`` (see
    ``ctxmodel.strategies.labels.features``) and ``target()`` leans toward more pairing defects.
    """
    knobs = _Knobs(
        min_turns, max_turns, max_calls, orphans, duplicate_results, duplicate_tool_uses, missing_results,
        interleave, reorder, tuple(result_forms), is_error, summaries, legacy_summaries, truncations,
        legacy_markers, dangling_parents, split_pairs, string_content, consecutive_roles, trailing_tool_use,
        thinking, images, unknown_blocks, unknown_keys, tuple(id_styles), bad_ids, defects, big_results,
        timestamps, text if text is not None else texts(nonblank=True),
    )
    return _histories(knobs)


@attrs.frozen
class _WfKnobs:
    min_turns: int
    max_turns: int
    max_calls: int
    thinking: bool
    images: bool
    result_forms: tuple[str, ...]
    is_error: bool
    summaries: bool
    truncations: bool
    pending: bool
    string_content: bool
    unknown_keys: bool
    id_styles: tuple[str, ...]
    big_results: bool
    timestamps: bool
    text: st.SearchStrategy[str]


@attrs.frozen
class _WfTurn:
    think: Block | None
    a_pre: list[Block]
    calls: list[tuple[str, Block, Block]]
    u_post: list[Block]
    user_string: str | None
    a_meta: dict[str, Any]
    u_meta: dict[str, Any]
    keep: bool


@memo
def _permutations(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(n))


@memo
def _result_texts(k: _WfKnobs) -> st.SearchStrategy[str]:
    """What a well-formed turn's results hold: one strategy object per knobs (see ``memo``)."""
    if k.big_results:
        return st.integers(0, 99).flatmap(lambda n: texts(min_size=2000, max_size=20_000) if n >= 94 else k.text)
    return texts(nonblank=True)


@memo
@st.composite
def _wf_turn(draw: st.DrawFn, k: _WfKnobs) -> _WfTurn:
    keep = draw(_KEEP)
    n_calls = draw(st.integers(0, k.max_calls))
    body = _result_texts(k)
    calls = []
    for _ in range(n_calls):
        raw_id = draw(tool_ids(styles=k.id_styles, bad=False))
        use = draw(tool_use_blocks(""))
        calls.append((raw_id, use, draw(tool_result_blocks("", forms=k.result_forms, is_error=k.is_error,
                                                            text=body))))
    think = None
    if k.thinking and calls:
        think = draw(redacted_thinking_blocks() if draw(chance(30)) else thinking_blocks())
    a_pre: list[Block] = []
    if not calls or draw(chance(40)):
        a_pre.append(draw(text_blocks(text=k.text)))
    u_post: list[Block] = []
    if not calls or draw(chance(35)):
        u_post.append(draw(text_blocks(text=k.text)))
    if k.images and draw(chance(12)):
        u_post.append(draw(image_blocks()))
    user_string = None
    if k.string_content and not calls and draw(chance(30)):
        user_string = draw(texts(nonblank=True))
    a_meta = draw(meta_extras(5)) if k.unknown_keys else {}
    u_meta = draw(meta_extras(5)) if k.unknown_keys else {}
    return _WfTurn(think, a_pre, calls, u_post, user_string, a_meta, u_meta, keep)


def _is_assistant(m: Msg) -> bool:
    return m.get("role") == "assistant"


@memo
@st.composite
def _wf_histories(draw: st.DrawFn, k: _WfKnobs) -> list[Msg]:
    first: Msg
    if k.string_content and draw(chance(25)):
        first = {"role": "user", "content": draw(texts(nonblank=True))}
    else:
        first = {"role": "user", "content": [draw(text_blocks(text=texts(nonblank=True)))]}
    turns = _kept(draw(st.lists(_wf_turn(k), min_size=k.min_turns, max_size=k.max_turns)), k.min_turns)
    # Thinking is on or off for the whole session: with it on, the oracle requires the last tool
    # turn to open with a thinking block (domain §5.2), and a correct agent stores one on every turn.
    thinking_on = k.thinking and draw(chance(35))
    msgs: list[Msg] = [first]
    used: set[str] = set()
    for t_i, turn in enumerate(turns):
        ids = [make_unique(raw, used) for raw, _, _ in turn.calls]
        uses = [{**use, "id": tid} for (_, use, _), tid in zip(turn.calls, ids, strict=True)]
        think = [turn.think] if thinking_on and turn.think is not None else []
        msgs.append({"role": "assistant", "content": think + list(turn.a_pre) + uses, **turn.a_meta})
        last = t_i == len(turns) - 1
        if last and not turn.calls and not k.pending and draw(chance(20)):
            break  # ends on an assistant text reply
        results = [{**res, "tool_use_id": tid} for (_, _, res), tid in zip(turn.calls, ids, strict=True)]
        if turn.user_string is not None:
            msgs.append({"role": "user", "content": turn.user_string, **turn.u_meta})
        else:
            msgs.append({"role": "user", "content": results + list(turn.u_post), **turn.u_meta})
    if k.pending and msgs[-1]["role"] == "user" and draw(chance(30)):
        calls = draw(st.lists(tool_ids(styles=k.id_styles, bad=False), min_size=1, max_size=2))
        think = [draw(thinking_blocks())] if thinking_on else []
        msgs.append({"role": "assistant", "content": think + [{**draw(tool_use_blocks("")), "id": make_unique(c, used)}
                                                              for c in calls]})
    if k.summaries:
        for n in range(2):
            starts = [i for i, m in enumerate(msgs) if i > 0 and _is_assistant(m)]
            if draw(chance(20)) and starts:
                cut = starts[draw(st.integers(0, len(starts) - 1))]
                cid = f"cond-{n + 1}"
                for m in msgs[:cut]:
                    m.setdefault("condenseParent", cid)
                msgs.insert(cut, {"role": "user", "content": [
                    {"type": "text", "text": SUMMARY_PREFIX + draw(texts(nonblank=True))}],
                    "isSummary": True, "condenseId": cid})
    if k.truncations and draw(chance(25)):
        hidden = visibility(msgs)
        vis = [i for i, h in enumerate(hidden) if h is None]
        # Cut only at assistant messages: a hidden run starts with a tool_use turn and ends with its results.
        cuts = [j for j in range(1, len(vis)) if _is_assistant(msgs[vis[j]])]
        if len(cuts) >= 2:
            # Never the last visible message either (contract §4.3): the run ends before a later turn.
            a = draw(st.integers(0, len(cuts) - 2))
            b = draw(st.integers(a + 1, len(cuts) - 1))
            s, e = cuts[a], cuts[b]
            for i in vis[s:e]:
                msgs[i]["truncationParent"] = "trunc-1"
            msgs.insert(vis[e], {"role": "user", "content": marker_text(e - s), "isTruncationMarker": True,
                                 "truncationId": "trunc-1"})
    if k.timestamps and draw(chance(50)):
        _timestamps(msgs)
    out = copy.deepcopy(msgs)
    label(out, prefix="well-formed")
    return out


def well_formed_histories(
    *,
    min_turns: int = 0,
    max_turns: int = 6,
    max_calls: int = 3,
    thinking: bool = True,
    images: bool = True,
    result_forms: Sequence[str] = RESULT_FORMS,
    is_error: bool = True,
    summaries: bool = True,
    truncations: bool = True,
    pending: bool = False,
    string_content: bool = True,
    unknown_keys: bool = True,
    id_styles: Sequence[str] = ID_STYLES,
    big_results: bool = True,
    timestamps: bool = True,
    text: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """What a correct agent stores (contract §7 ``request``): valid by construction.

    Alternating turns, results first and in ``tool_use`` order, unique ids of the API's charset,
    thinking blocks first on tool turns, images after results; condense summaries and truncation
    markers that hide whole turns (never a pair's half). ``effective`` then ``normalize`` of such a
    history passes the oracle and ``normalize`` changes nothing (checked in tests). ``pending``
    allows a trailing assistant ``tool_use`` whose results are still pending (contract §3
    ``trailing=leave``).
    """
    knobs = _WfKnobs(
        min_turns, max_turns, max_calls, thinking, images, tuple(result_forms), is_error, summaries, truncations,
        pending, string_content, unknown_keys, tuple(i for i in id_styles if i != "srvtoolu") or ("toolu",),
        big_results, timestamps, text if text is not None else texts(nonblank=True),
    )
    return _wf_histories(knobs)
