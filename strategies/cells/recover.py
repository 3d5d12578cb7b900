"""``recovery_requests(cells=PATTERNS)`` (``cell_requests``): recover requests drawn cell first.

A pattern of ``recover`` cells is drawn first, then a stored history laid out for the visible kind,
a last tool turn holding what can be degraded, and a budget placed for the regime by recounting and
by asking the reference how far hiding and degrading reach (the package docstring says what else
the draw varies within a cell).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from ctxmodel import partition
from ctxmodel.contract_data import DEFAULT_RESERVE, FLOOR_CHARS, notice_text, reserve_for, usable_window, window_for
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.blocks import block_extras, image_blocks
from ctxmodel.strategies.cells.fresh import GUARD, ONCE, first_choices
from ctxmodel.strategies.cells.pieces import (
    TAGS,
    emit_cells,
    ids_in,
    marker_message,
    summary_message,
    tool_call,
    unmarked,
)
from ctxmodel.strategies.histories import TS_BASE, histories, well_formed_histories
from ctxmodel.strategies.ids import make_unique
from ctxmodel.strategies.labels import visibility
from ctxmodel.strategies.text import (
    chance,
    cheap_tail_texts,
    dense_texts,
    giant_texts,
    memo,
    padded_tail_texts,
    padding_runs,
    pick,
    texts,
)

__all__ = ["cell_requests"]


_MAX_TOKENS = (4096, 8192, 16384, 64000, 1, 100)


def _restamped(messages: list[Msg], like: Sequence[Msg]) -> list[Msg]:
    if not any("ts" in m for m in like):
        return messages
    return [{**m, "ts": TS_BASE + 1000 * i} for i, m in enumerate(messages)]


def _result_texts(block: Msg) -> list[tuple[int | None, str]]:
    inner = block.get("content")
    if isinstance(inner, str):
        return [(None, inner)]
    if isinstance(inner, list):
        return [(k, i["text"]) for k, i in enumerate(inner)
                if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str)]
    return []


def _map_results(messages: list[Msg], fn: Callable[[str, bool], str]) -> None:
    """Replace every tool-result text by ``fn(text, beside_an_image)``, in place."""
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                content[b] = {**block, "content": fn(inner, False)}
            elif isinstance(inner, list):
                image = any(isinstance(i, dict) and i.get("type") == "image" for i in inner)
                content[b] = {**block, "content": [
                    {**i, "text": fn(i["text"], image)}
                    if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str) else i
                    for i in inner]}


def _at_floor(messages: Sequence[Msg]) -> list[Msg]:
    """Every tool-result text over the floor cut to it, notice included (the deepest degradation)."""
    out = copy.deepcopy(list(messages))
    _map_results(out, lambda t, _: t if len(t) <= FLOOR_CHARS else t[:FLOOR_CHARS] + notice_text(len(t) - FLOOR_CHARS))
    return out


# -- recover ---------------------------------------------------------------------------------------


@memo
def _system_prompts() -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), texts(max_size=80), texts(min_size=500, max_size=5000))


@memo
@st.composite
def _fill(draw: st.DrawFn, pattern: str) -> tuple[str, str, str]:
    parts = pattern.partition(":")[2].split("/")
    regime = parts[0]
    visible = parts[1] if len(parts) > 1 and parts[1] != "*" else draw(pick(partition.VISIBLE))
    options = tuple(d for d in partition.DEGRADABLE if f"recover:{regime}/{visible}/{d}" not in partition.IMPOSSIBLE)
    given = parts[2] if len(parts) > 2 else "*"
    degradable = given if given != "*" else draw(pick(options))
    return regime, visible, degradable


def _big_pair(draw: st.DrawFn, used: set[str], above: int) -> list[Msg]:
    """A tool turn with an oversized result, to be hidden: what a recovery must never degrade (§4.5).

    Its text is longer than ``above`` (the longest visible result): the oldest and the largest
    result, the first one both real orders take (largest first, domain §3.7; oldest first, §5.3), so
    a recovery that takes it for visible cuts it whatever its order."""
    tid = make_unique("toolu_hidden", used)
    low = max(1500, above + 1)
    text = draw(texts(min_size=low, max_size=low + 3500, kinds=("prose", "code")))
    content: Any = text
    if draw(chance(30)):
        content = [draw(image_blocks()), {"type": "text", "text": text}]
    return [{"role": "assistant", "content": [tool_call(draw, tid)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": content}]}]


def _old_pair(draw: st.DrawFn, used: set[str], main: int, longer: bool, under: int | None) -> list[Msg]:
    """A visible tool turn whose string result is over the floor: shorter than ``main`` (the last
    turn's main text), or ``longer`` than it, the largest visible result, which the cut hides; and
    shorter than ``under`` (the hidden oversized result, which stays the largest of all)."""
    tid = make_unique("toolu_old", used)
    low, high = (main + 1, main + 3000) if longer else (201, max(201, min(5000, main - 1)))
    if under is not None:
        high = max(low, min(high, under - 1))
    text = draw(texts(min_size=low, max_size=high, kinds=("prose", "code")))
    return [{"role": "assistant", "content": [tool_call(draw, tid)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]}]


def _layout(
    draw: st.DrawFn, visible: str, body: list[Msg], used: set[str], keep_mid: bool, main: int
) -> tuple[list[Msg], list[Msg]]:
    """(head, middle): the messages up to the first visible one (hidden ones included), then the
    visible rest of the drawn body (none unless ``keep_mid``), arranged so the history's visible
    kind is ``visible`` (``dangling`` tags are the caller's, once the history is whole)."""
    first, rest = body[0], body[1:]
    if visible in ("plain", "dangling"):
        return [first], rest if keep_mid else []
    cut = draw(st.integers(1, len(body)))
    big = _big_pair(draw, used, main)
    # A legacy history holds an assistant-role summary, an assistant-role marker, or (half the draws)
    # both, each hiding an oversized result: a scan that misreads either legacy form cuts what it
    # hides (§2, §4.5), and every legacy draw holds at least one of them to misread.
    legacy_both = visible == "legacy" and draw(st.booleans())
    if visible == "condensed" or (visible == "legacy" and (legacy_both or draw(chance(50)))):
        role = "assistant" if visible == "legacy" else "user"
        hidden, mid = body[:cut], body[cut:] if keep_mid else []
        if visible == "condensed" and draw(st.booleans()):
            # An earlier summary among the hidden messages, and after the last summary a tool turn its
            # condenseParent still hides (contract §2: a parent anywhere in the input hides). The
            # hidden tool turn is before or after the last summary alike: the position axis of the
            # effective partition (ctxmodel.partition.POSITIONS).
            at = draw(st.integers(0, len(hidden)))
            for m in hidden[:at]:
                m.setdefault("condenseParent", "cond-e")
            for m in big:
                m["condenseParent"] = "cond-e"
            return [*hidden[:at], summary_message("cond-e"), *hidden[at:], summary_message("cond-c"), *big], mid
        hidden = hidden + big
        if draw(chance(70)):
            for m in hidden:
                m.setdefault("condenseParent", "cond-c")
        if legacy_both:
            # The file was condensed, then truncated: the marker right after the summary (the first
            # visible message), hiding a second oversized tool turn.
            run = _big_pair(draw, used, main)
            for m in run:
                m["truncationParent"] = "trunc-t"
            return [*hidden, summary_message("cond-c", role), marker_message("trunc-t", len(run), "assistant"),
                    *run], mid
        return [*hidden, summary_message("cond-c", role)], mid
    # truncated, or legacy as an assistant-role marker after the first message (domain §2.1)
    run = body[1:cut] + big
    for m in run:
        m["truncationParent"] = "trunc-t"
    mid = body[cut:] if keep_mid else []
    if visible == "legacy":
        return [first, marker_message("trunc-t", len(run), "assistant"), *run], mid
    marker = marker_message("trunc-t", len(run))
    pairs = [j for j in range(len(mid) - 1) if _holds_results_of(mid[j], mid[j + 1])]
    # Where the marker is stored, one of three drawn alike: before the last summary, between a call
    # and its results, or right before the visible rest (the plain case).
    where = draw(st.integers(0, 2 if pairs else 1))
    if where == 1:
        # A marker stored before the last summary, hiding messages after it (a merge by ts reorders
        # such pairs, domain §1.3): the marker exists, so they are hidden (contract §2), though a
        # slice from the summary does not hold it.
        return [{**first, "condenseParent": "cond-c"}, marker, summary_message("cond-c"), *run], mid
    if where == 2:
        # An old marker between a tool_use and its results (a new cut must not split the pair, §4.3/§4.4).
        j = pairs[draw(st.integers(0, len(pairs) - 1))]
        return [first, *run], [*mid[: j + 1], marker, *mid[j + 1 :]]
    return [first, *run, marker], mid


def _reuse_hidden_id(head: list[Msg], last: list[Msg]) -> None:
    """Give the hidden tool turn the id of the last turn's first call, in place: the model repeats
    ids across turns (domain), so a result found by its id alone may be the hidden one (§2, §4.5)."""
    uses = [b for b in last[0]["content"] if b.get("type") == "tool_use"]
    if not uses:
        return
    new = uses[0]["id"]
    for m in head:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and str(b.get("id", "")).startswith("toolu_hidden"):
                b["id"] = new
            elif b.get("type") == "tool_result" and str(b.get("tool_use_id", "")).startswith("toolu_hidden"):
                b["tool_use_id"] = new


#: The parent a hidden message of each visible kind names (``_layout``'s last summary and marker).
_PARENT_OF = {"condensed": ("condenseParent", "cond-c"), "truncated": ("truncationParent", "trunc-t")}


def _hidden_in_pair(draw: st.DrawFn, mid: list[Msg], tag: str, parent: str) -> list[Msg]:
    """``mid``, sometimes with a hidden message stored between a visible ``tool_use`` message and
    the user message holding its results: where the stored order (a merge by ``ts``, domain §1.3)
    may put one. The stored neighbour of the call is then not the visible one (contract §2, §4.3)."""
    pairs = [j for j in range(len(mid) - 1) if _holds_results_of(mid[j], mid[j + 1])]
    if not pairs or not draw(chance(35)):
        return mid
    # A pair before the last turn where there is one: a cut may end there, never in the last turn (§4.3).
    cuttable = [j for j in pairs if j + 2 < len(mid) - 1]
    if cuttable and draw(chance(75)) is True:
        pairs = cuttable
    j = pairs[draw(st.integers(0, len(pairs) - 1))]
    role = draw(pick(("user", "assistant")))
    note = {"role": role, "content": draw(texts(min_size=1, max_size=300, kinds=("prose",), nonblank=True)),
            tag: parent}
    return [*mid[: j + 1], note, *mid[j + 1 :]]


def _holds_results_of(assistant: Msg, user: Msg) -> bool:
    if assistant.get("role") != "assistant" or user.get("role") != "user":
        return False
    a_content, u_content = assistant.get("content"), user.get("content")
    if not isinstance(a_content, list) or not isinstance(u_content, list):
        return False
    uses = {b.get("id") for b in a_content if isinstance(b, dict) and b.get("type") == "tool_use"}
    return any(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in uses
               for b in u_content)


@memo
@st.composite
def _main_text(draw: st.DrawFn, regime: str, degradable: str) -> tuple[str, bool]:
    """The text of the last turn's main result (what the degradable kind names, sized for the
    regime), and whether a cut of it grows it by construction."""
    if regime in _CHEAP_AT and degradable in ("string", "image"):
        return draw(_cheap_main(regime))
    return draw(_plain_main(regime, degradable)), False


#: Where the main text is sometimes one whose cut grows (percent): the regimes that must degrade.
_CHEAP_AT = {"over-degrade-only": 60, "over-hide": 25, "over-stuck": 25}


@memo
@st.composite
def _cheap_main(draw: st.DrawFn, regime: str) -> tuple[str, bool]:
    """A giant text, or sometimes a cheap tail: padding a cut must go deep into to free anything,
    or short enough that any cut grows it (§4.5 weighs the notice). ``_last_turn`` gives the latter
    a second text, so the degradation that fits can still be made."""
    if not draw(chance(_CHEAP_AT[regime])):
        return draw(giant_texts()), False
    if draw(st.booleans()):
        return draw(cheap_tail_texts()), True
    return draw(padded_tail_texts()), False


@memo
@st.composite
def _plain_main(draw: st.DrawFn, regime: str, degradable: str) -> str:
    prose = ("prose", "code")
    if degradable == "none":
        return draw(texts(min_size=1, max_size=200, kinds=prose))
    if degradable == "dense":
        # Just above the floor, where the notice's own length decides (§4.5 shrinks notice included,
        # in characters and in tokens). Up to 275 characters the notice does not fit; from 320 it
        # does, if just. A cheap tail after a dense prefix is the other side of the token count: the
        # characters a cut removes cost fewer tokens than the notice that replaces them.
        way = 0 if regime == "over-none" else draw(st.integers(0, 2))
        if way == 0:
            return draw(dense_texts(201, 275))
        if way == 1:
            return draw(dense_texts(320, 400))
        return draw(dense_texts(200, 230)) + draw(padding_runs(40, 170))
    if regime == "over-none":
        return draw(texts(min_size=201, max_size=260, kinds=prose))
    if regime in partition.COLLAPSED:
        return draw(texts(min_size=201, max_size=1500, kinds=prose))  # nothing is to be degraded here
    return draw(giant_texts())


@memo
@st.composite
def _result_fields(draw: st.DrawFn) -> dict[str, Any]:
    """What a result holds besides its content: ``is_error`` (a failed command's log is the typical
    giant result) and a key ctxmodel does not know. Degradation edits only the text (§4.5): a cut
    that rebuilds the block from its id and content loses them."""
    fields: dict[str, Any] = {}
    if draw(chance(25)):
        fields["is_error"] = draw(chance(75))
    fields.update(draw(block_extras(10)))
    return fields


def _last_turn(draw: st.DrawFn, regime: str, degradable: str, used: set[str]) -> list[Msg]:
    """The last assistant tool turn and the user message holding its results (never hidden, §4.3)."""
    text, grows = draw(_main_text(regime, degradable))
    main: Any = text
    if degradable == "image":
        items: list[Msg] = [{"type": "text", "text": text}]
        order = draw(st.integers(0, 2))
        items.insert(0 if order else 1, draw(image_blocks()))
        if order == 2:
            items.append({"type": "text", "text": "exit code 1"})
        main = items
    elif draw(chance(25)):
        main = [{"type": "text", "text": text}]
    bodies: list[Any] = [main]
    big_ok = degradable in ("string", "image") and regime != "over-none"
    if degradable == "dense" and regime != "over-none" and draw(chance(60)):
        # Dense text from the other side of the notice's room as well: one a cut can fit a notice
        # into (320-400 characters) and one it cannot (201-275), so a recovery that cuts the first
        # must still leave the second alone (§4.5: a text that cannot shrink is not cut).
        bodies.append(draw(dense_texts(201, 275) if len(text) >= 300 else dense_texts(320, 400)))
    elif big_ok and regime in ("over-degrade-only", "over-stuck") and draw(chance(50)):
        # More texts to cut than a converging target has calls (one and three more, §4.7): a
        # recovery that makes one cut per call never gets there.
        bodies += [draw(texts(min_size=400, max_size=1000, kinds=("prose", "code")))
                   for _ in range(draw(st.integers(4, 7)))]
    elif big_ok and len(text) > 400 and (grows or draw(chance(60))):
        # A second text, smaller, cut after the main one: what a degradation needs more than one cut
        # for, where the main cut must not have grown anything (§4.5). A main text whose cut grows
        # always has one: the degradation that fits (or progresses) is then the second text's, and a
        # target that keeps the grown cut still succeeds.
        bodies.append(draw(texts(min_size=300, max_size=min(1200, len(text) - 1), kinds=("prose", "code"))))
    elif draw(chance(40)):
        bodies.append(draw(texts(min_size=400, max_size=1200, kinds=("prose", "code"))) if big_ok
                      else draw(texts(min_size=1, max_size=200, kinds=("prose",))))
    if big_ok and draw(chance(30)):
        bodies.append(draw(texts(min_size=201, max_size=280, kinds=("prose",))))
    ids = [make_unique(f"toolu_last{k}", used) for k in range(len(bodies))]
    uses = [tool_call(draw, i) for i in ids]
    say = [{"type": "text", "text": draw(texts(min_size=1, max_size=60, nonblank=True))}] if draw(chance(30)) else []
    results: list[Msg] = [{"type": "tool_result", "tool_use_id": i, "content": c, **draw(_result_fields())}
                          for i, c in zip(ids, bodies, strict=True)]
    if draw(chance(30)):
        results.append(draw(image_blocks()))  # a screenshot after the results: recovery keeps it
    return [{"role": "assistant", "content": say + uses}, {"role": "user", "content": results}]


@memo
@st.composite
def _filler(draw: st.DrawFn) -> list[Msg]:
    """A text exchange worth hiding: what truncation can take (§4.3)."""
    return [{"role": "assistant", "content": draw(texts(min_size=300, max_size=1500, kinds=("prose", "code")))},
            {"role": "user", "content": draw(texts(min_size=20, max_size=300, kinds=("prose",)))}]


def _floor_pairs(draw: st.DrawFn, used: set[str]) -> list[Msg]:
    """Tool turns whose results are just above the floor, before the big one (a notice must never grow them)."""
    out: list[Msg] = []
    for _ in range(draw(st.integers(1, 2))):
        tid = make_unique("toolu_floor", used)
        out.append({"role": "assistant", "content": [tool_call(draw, tid)]})
        text = draw(texts(min_size=201, max_size=300, kinds=("prose",)))
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]})
    return out


def _short_pair(draw: st.DrawFn, used: set[str]) -> list[Msg]:
    """A tool turn whose result is under the floor (it changes nothing the cell names)."""
    tid = make_unique("toolu_pair", used)
    text = draw(texts(min_size=1, max_size=200, kinds=("prose", "code")))
    return [{"role": "assistant", "content": [tool_call(draw, tid)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]}]


def _visible(messages: Sequence[Msg]) -> list[Msg]:
    return [m for m, h in zip(messages, visibility(messages), strict=True) if h is None]


def _untagged(m: Msg) -> Msg:
    return {k: v for k, v in m.items() if k not in TAGS}


def _after_cut(vis: Sequence[Msg], j: int) -> list[Msg]:
    """What a cut hiding visible positions ``1..j`` leaves, untagged: the first message, the earlier
    markers among the hidden ones (they stay, §4.3), then the rest; the new marker is the caller's."""
    kept = [vis[0], *(m for m in vis[1 : j + 1] if m.get("isTruncationMarker") is True), *vis[j + 1 :]]
    return [_untagged(m) for m in kept]


def _reach(messages: Sequence[Msg], system_prompt: str, marker: bool, floor: bool) -> int:
    """A lower bound of what any cut (and, with ``floor``, any degradation to the floor) leaves: the
    first visible message, the markers, the last turn, with or without the new marker (§4.3, §4.5)."""
    vis = _visible(messages)
    keep = _after_cut(vis, len(vis) - 3) if len(vis) >= 3 else [_untagged(m) for m in vis]
    if marker:
        keep.insert(1, marker_message("trunc-new", 1))
    if floor:
        keep = _at_floor(keep)
    return partition.request_count(keep, system_prompt)


def _pair_boundary(draw: st.DrawFn, messages: Sequence[Msg], system_prompt: str, reserve: int) -> int | None:
    """A budget at which the smallest cut would end between a visible call and its results: what is
    left when the visible messages from the second up to the ``tool_use`` message are hidden (the new
    marker counted). A cut must not stop there (§4.4), so the pairing check decides exactly at these
    budgets, and a check that reads the wrong neighbour (the stored one, not the visible one) is
    caught only there. ``None`` when there is no such boundary or the reference does not recover
    there by hiding alone (the regime would change)."""
    hidden = visibility(messages)
    at = [i for i, h in enumerate(hidden) if h is None]
    vis = [messages[i] for i in at]
    ends = [j for j in range(1, len(vis) - 3) if _holds_results_of(vis[j], vis[j + 1])]
    # Where a hidden message is stored between the call and its results, first (the visible
    # neighbour is not the stored one there, §2).
    apart = [j for j in ends if at[j + 1] != at[j] + 1]
    if apart and draw(chance(70)) is True:
        ends = apart
    if not ends:
        return None
    j = ends[draw(st.integers(0, len(ends) - 1))]
    keep = _after_cut(vis, j)
    keep.insert(1, marker_message("trunc-new", j))
    budget = partition.request_count(keep, system_prompt)
    if budget < 1:
        return None
    got = _fits(messages, system_prompt, budget, reserve)
    return budget if got.error is None and not got.degraded else None


def _fits(messages: Sequence[Msg], system_prompt: str, allowed: int, reserve: int) -> Any:
    return partition.reference_recover(messages, window_for(allowed, reserve), reserve, system_prompt)


def _budget(draw: st.DrawFn, regime: str, messages: list[Msg], system_prompt: str) -> tuple[int, int, bool]:
    """(contextWindow, maxTokens, checked) placing the request in ``regime``; ``checked`` when the
    reference was asked at that very budget and answered as the regime says (no need to ask again)."""
    if regime == "allowed<=0":
        max_tokens = draw(st.integers(-10, 0)) if draw(chance(15)) else draw(pick(_MAX_TOKENS))
        reserve = reserve_for(max_tokens)
        window = draw(st.integers(1, max(1, (10 * reserve) // 9)))
        if draw(chance(30)):
            window = next((w for w in range(max(1, (10 * reserve) // 9 - 2), (10 * reserve) // 9 + 4)
                           if usable_window(w) - reserve == 0), window)  # allowed == 0 exactly
        return window, max_tokens, False
    count = partition.request_count(messages, system_prompt)
    if regime in ("within", "at-allowed"):
        max_tokens = draw(st.integers(-10, 0)) if draw(chance(15)) else draw(pick(_MAX_TOKENS))
        reserve = reserve_for(max_tokens)
        slack = 0 if regime == "at-allowed" else (
            draw(st.integers(1, 3)) if draw(chance(50)) else draw(st.integers(4, 2 * count + 100)))
        return window_for(count + slack, reserve), max_tokens, False
    if regime == "reserve-gap":
        max_tokens = 0 if draw(chance(40)) else draw(st.integers(-10, -1))
        allowed = draw(st.integers(max(1, count - DEFAULT_RESERVE + max_tokens), max(1, count - 1)))
        return window_for(allowed, DEFAULT_RESERVE), max_tokens, False
    max_tokens = draw(pick(_MAX_TOKENS))
    top = max(1, count - 1)
    if regime == "over-hide":
        got = _fits(messages, system_prompt, top, max_tokens)
        allowed, checked = top, got.error is None and not got.degraded
        if checked:
            # Every budget from the count this cut leaves up to count - 1 takes the same cut (§4 reference).
            low = min(top, max(1, got.new_context_tokens))
            allowed = draw(st.integers(low, top))
            deeper = max(1, count // 4)
            way = draw(st.integers(0, 99))
            if way < 30:
                allowed = _edge(draw, messages, system_prompt, low, max_tokens, degraded=False, just_over=top)
            elif way < 60:
                at = _pair_boundary(draw, messages, system_prompt, max_tokens)
                allowed = allowed if at is None else at
            elif draw(chance(40)) and deeper < low:
                trial = draw(st.integers(deeper, low - 1))
                again = _fits(messages, system_prompt, trial, max_tokens)
                if again.error is None and not again.degraded:
                    allowed = trial
        return window_for(allowed, max_tokens), max_tokens, checked
    if regime == "over-degrade-only":
        high = min(top, _reach(messages, system_prompt, True, False) - 1)
        low = _reach(messages, system_prompt, True, True) + 3
        near = draw(st.integers(0, 9)) if low <= high else 0
        shallow = 3 <= near < 8
        if near < 3:
            # Just above what degrading everything to the floor reaches: every cut is needed.
            high = low + (high - low) // 8
        elif shallow:
            # Half the draws: just under what hiding everything reaches, a few tokens left to
            # degrade, fewer than a notice costs. There a cut that frees less than it claims (its
            # notice not weighed, its length not reserved) is the difference between shrinking and
            # not (§4.5); uniform budgets almost never land here.
            low = max(low, high - 24)
        allowed = max(1, draw(st.integers(low, high)) if low <= high else high)
        got = _fits(messages, system_prompt, allowed, max_tokens)
        if got.error is not None and allowed < high:
            allowed = max(1, high)
            got = _fits(messages, system_prompt, allowed, max_tokens)
        if shallow and got.error is None and got.degraded:
            # The estimate above is a lower bound; the reference's own cut tells exactly what hiding
            # leaves (its count plus what its degradation freed): a few tokens under that.
            hidden_only = got.new_context_tokens + sum(d.before_tokens - d.after_tokens for d in got.degraded)
            trial = draw(st.integers(max(1, hidden_only - 24), max(1, hidden_only - 1)))
            again = _fits(messages, system_prompt, trial, max_tokens)
            if again.error is None and again.degraded:
                allowed, got = trial, again
        elif got.error is None and got.degraded and draw(chance(30)):
            edge = _edge(draw, messages, system_prompt, max(1, got.new_context_tokens), max_tokens, degraded=True,
                         just_over=top)
            if edge != allowed:
                allowed = edge
                got = _fits(messages, system_prompt, allowed, max_tokens)
        return window_for(allowed, max_tokens), max_tokens, got.error is None and bool(got.degraded)
    if regime == "over-stuck":
        high = _reach(messages, system_prompt, False, True) - 3
        if high < 1:
            return window_for(1, max_tokens), max_tokens, False
        way = draw(st.integers(0, 2))
        if way == 0:
            # Just out of the reference's reach: a recovery that takes one thing more than the
            # contract lets it (a text that cannot shrink, a hidden result, a message a cut must
            # keep) gets there and succeeds, so its output is judged, not its error.
            reached = _reached(_fits(messages, system_prompt, high, max_tokens))
            if reached is not None and reached > 1:
                allowed = draw(st.integers(max(1, reached - 40), reached - 1))
                return window_for(allowed, max_tokens), max_tokens, False
        allowed = draw(st.integers(max(1, high - 150), high) if way < 2 else st.integers(1, high))
        return window_for(allowed, max_tokens), max_tokens, False
    # over-none: nothing can be hidden or shrunk, any budget under the count
    allowed = draw(st.integers(max(1, count - 50), top) if draw(chance(60)) else st.integers(1, top))
    return window_for(allowed, max_tokens), max_tokens, False


_LEAVES = re.compile(r" leaves (\d+) tokens, over the ")


def _reached(got: Any) -> int | None:
    """What the reference's failed recovery got down to (its error says), when it made progress."""
    found = _LEAVES.search(got.error or "")
    return int(found.group(1)) if found else None


def _edge(
    draw: st.DrawFn, messages: list[Msg], system_prompt: str, leaves: int, reserve: int, degraded: bool,
    just_over: int | None = None,
) -> int:
    """A budget on a one-token boundary: one token under the history's own count (``just_over``: the
    smallest over-budget request, the mirror of ``at-allowed``), exactly what the reference's recovery
    leaves (``leaves``), or one token under that when the reference still recovers there the same way
    (hiding only, or with degradation). A recount one token off (a fudge rounded once instead of
    twice, a separator left out: contract §4 "Count", §5) takes the wrong side of exactly these
    budgets and nowhere else, so a uniform draw between the regime's bounds almost never meets one."""
    edges = (leaves, leaves - 1, just_over) if just_over is not None else (leaves, leaves - 1)
    pick = edges[draw(st.integers(0, len(edges) - 1))]
    if pick is None or pick < 1:
        return leaves
    if pick == leaves - 1 or (pick == just_over and degraded):
        again = _fits(messages, system_prompt, pick, reserve)
        if again.error is None and bool(again.degraded) == degraded:
            return pick
        return leaves
    return pick


def _cap(messages: list[Msg], degradable: str, main: int) -> None:
    """Keep the drawn body's own results from deciding the degradable kind: every text at most the
    floor, except (for ``string``) string content shorter than the last turn's main text."""
    def cap(text: str, image: bool) -> str:
        if degradable == "string" and not image and len(text) < main:
            return text
        return text[:200]

    _map_results(messages, cap)


#: Parent ids whose summary or marker is gone: made-up ones, and ones of the forms an id factory
#: writes (a counter, a timestamp): the id a target makes for its new marker may be one of them, and
#: its marker then hides every message that names it (contract §2, §4.3).
_MADE = ("trunc-1", "cond-1", "trunc-2", "1772456515261")
_GONE = ("cond-gone", "trunc-gone", "gone", *_MADE)
_BOTH_OR_ONE = (("condenseParent",), ("truncationParent",), TAGS)


def _dangling(draw: st.DrawFn, messages: list[Msg]) -> None:
    """Parent tags that name nothing on some visible messages (a rewind deleted their summary or marker).

    One of three shapes, drawn first (the pairs in half the draws): pairs half tagged (for every
    pair before the last turn, the call or the message holding its results names the dangling
    parent), a run of messages sharing one id (the shape a deleted marker or summary leaves), or
    scattered tags. The
    half-tagged pair is drawn as one choice, not as a run that happens to end at an edge: what a cut
    may hide around a call depends on reading its dangling half as visible (§2, §4.4), and a cut
    reaches any of the older pairs, so each of them is a chance to meet it."""
    edges = _pair_edges(messages[:-1])  # the last turn's pair is never cut (§4.3)
    shape = min(2, draw(st.integers(0, 3 if edges else 1)))
    tag = draw(pick(TAGS))
    parent = draw(pick(_MADE if draw(chance(50)) else _GONE))
    if shape == 2:
        # Each pair its own half and its own tag (one of them, or both: a message truncated, then
        # condensed, carries both), so a history holds several of the four kinds at once; or (half
        # the draws) every call tagged with a gone marker's id: the half a cut that reads the tag
        # alone steps over while it hides the results (§2, §4.4), on every pair a cut can reach.
        calls = draw(st.booleans())
        for edge in edges:
            if calls:
                messages[edge - 1]["truncationParent"] = parent
                continue
            m = messages[edge - 1 if draw(st.booleans()) else edge]
            for name in draw(pick(_BOTH_OR_ONE)):
                m[name] = parent
        return
    if shape == 1 and len(messages) > 1:
        start = draw(st.integers(0, len(messages) - 1))
        # A run that reaches the last message: what a marker stored after everything it hid leaves.
        end = len(messages) if draw(chance(50)) else draw(st.integers(start + 1, len(messages)))
        for m in messages[start:end]:
            m[tag] = parent
        return
    chosen = [m for m in messages if draw(chance(30))] or [messages[draw(st.integers(0, len(messages) - 1))]]
    for m in chosen:
        m[draw(pick(TAGS))] = draw(pick(_GONE))


def _pair_edges(messages: Sequence[Msg]) -> list[int]:
    """Indices whose message follows one holding a ``tool_use``: where its results belong."""
    return [i for i in range(1, len(messages))
            if isinstance(messages[i - 1].get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in messages[i - 1]["content"])]


@st.composite
def _cell_request(
    draw: st.DrawFn, patterns: tuple[str, ...], history: st.SearchStrategy[list[Msg]], focus: tuple[str, ...]
) -> dict[str, Any]:
    # Half the fresh examples draw their pattern without replacement (the ``ONCE`` guard exhausts the
    # branch), so a 60-example run meets every pattern within its first twenty-odd examples; the other
    # half draw it at random, for as long as the run lasts, from the focus in half of those draws
    # (``ctxmodel.partition.Plan``). The focus choice comes after the first one, and only in the
    # random half: the exhausted branch of the draw without replacement stays one per pattern.
    once, index = draw(first_choices(2, len(patterns)))
    pattern = patterns[index]
    if once == 1 and focus:
        lean, at = draw(first_choices(2, len(focus)))
        pattern = focus[at] if lean == 1 else pattern
    draw(ONCE if once == 0 else GUARD)
    regime, visible, degradable = draw(_fill(pattern))
    if regime == "over-none" and visible in ("plain", "dangling"):
        # Nothing but the task stays of the drawn history (nothing may be hidden): draw the task only.
        drawn = [{"role": "user", "content": draw(texts(min_size=1, max_size=400, nonblank=True))}]
    else:
        drawn = draw(history)
    body = unmarked(drawn)
    used = ids_in(body)
    system_prompt = draw(_system_prompts())
    last = _last_turn(draw, regime, degradable, used)
    main = max((len(t) for b in last[1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
                for _, t in _result_texts(b)), default=0)
    _cap(body, degradable, main)
    # Nothing to hide over-none; over-degrade-only sometimes neither (the single-giant shape, domain §3.7).
    keep_mid = not (regime == "over-none" or (regime == "over-degrade-only" and draw(chance(20))))
    head, mid = _layout(draw, visible, body, used, keep_mid, main)
    # The hidden oversized result's length, read before its id may be reused (only the old pair reads it).
    hidden_top = max((len(t) for m in head if isinstance(m.get("content"), list) for b in m["content"]
                      if isinstance(b, dict) and b.get("type") == "tool_result"
                      and str(b.get("tool_use_id", "")).startswith("toolu_hidden")
                      for _, t in _result_texts(b)), default=None) if regime == "over-degrade-only" else None
    extra: list[Msg] = []
    if regime in ("over-hide", "over-degrade-only", "over-stuck") and degradable in ("string", "image") \
            and draw(chance(60)):
        extra += _floor_pairs(draw, used)
    filler = {"over-hide": 60, "over-stuck": 50, "over-degrade-only": 30, "over-none": 0}.get(regime, 15)
    if filler and (draw(chance(filler)) or (regime == "over-stuck" and degradable == "none")):
        extra += draw(_filler())
    if visible == "dangling":
        if regime != "over-none" and not _pair_edges([*head, *mid, *extra]):
            extra = [*_short_pair(draw, used), *extra]  # a pair to half tag, where a cut reaches first
        _dangling(draw, [*head, *mid, *extra, *last])
    if visible != "plain" and draw(chance(35)):
        _reuse_hidden_id(head, last)
    if regime == "over-degrade-only" and degradable in ("string", "image") and bool(mid) and draw(chance(40)):
        # An old tool turn with a big result, visible, where the cut hides first: degradation after
        # this call's truncation must not cut what the call itself just hid (§4.5: visible in the
        # result). For string results, half the time the largest of all: what a recovery that picks
        # its candidates before its cut (largest first, domain §3.7) cuts first.
        longer = degradable == "string" and draw(st.booleans())
        mid = [*_old_pair(draw, used, main, longer, hidden_top), *mid]
    rest = [*mid, *extra, *last]
    if visible in _PARENT_OF:
        rest = _hidden_in_pair(draw, rest, *_PARENT_OF[visible])
    messages = _restamped([*head, *rest], drawn)
    window, max_tokens, checked = _budget(draw, regime, messages, system_prompt)
    request = {"messages": messages, "contextWindow": window, "maxTokens": max_tokens, "systemPrompt": system_prompt}
    cell = _cell_of(request, regime if checked else None)
    if regime in ("over-hide", "over-stuck") and not any(partition.matches(f"recover:{regime}/*/*", c) for c in cell):
        # Not enough to hide or to progress: one more exchange worth hiding, and the budget again.
        at = next(i for i, m in enumerate(rest) if m is last[0])
        messages = _restamped([*head, *rest[:at], *draw(_filler()), *rest[at:]], drawn)
        window, max_tokens, checked = _budget(draw, regime, messages, system_prompt)
        request = {**request, "messages": messages, "contextWindow": window, "maxTokens": max_tokens}
        cell = _cell_of(request, regime if checked else None)
    emit_cells(cell)
    return request


def _cell_of(request: dict[str, Any], regime: str | None) -> set[str]:
    """The request's cell; ``regime`` when the reference was already asked at this budget."""
    if regime is None:
        return partition.cells_of("recover", request)
    messages = request["messages"]
    return {f"recover:{regime}/{partition.visible_kind(messages)}/{partition.degradable_kind(messages)}"}


def cell_requests(
    patterns: Sequence[str], history: st.SearchStrategy[list[Msg]] | None = None, focus: Sequence[str] = ()
) -> st.SearchStrategy[dict[str, Any]]:
    """Recover requests, each in one of ``patterns`` (``recover:over-stuck/*/dense``...), the pattern
    drawn first, uniformly or (half the random draws) among ``focus``. ``history`` gives the drawn
    messages the request is built around."""
    patterns, focus = tuple(patterns), tuple(focus)
    if not patterns:
        raise ValueError("cell_requests: no pattern")
    if not set(focus) <= set(patterns):
        raise ValueError(f"cell_requests: focus {sorted(set(focus) - set(patterns))} is not among the patterns")
    for p in patterns:
        if not any(partition.matches(p, c) for c in partition.RECOVER_CELLS):
            raise ValueError(f"cell_requests: {p!r} matches no recover cell of ctxmodel.partition")
    if history is None:
        history = _bodies()
    return _cell_request(patterns, history, focus)


@memo
def _bodies() -> st.SearchStrategy[list[Msg]]:
    """The drawn part of a request: a stored history of up to four turns, well-formed or broken (the
    request adds its own last tool turn, hidden turns and an exchange worth hiding where needed)."""
    return st.one_of(well_formed_histories(max_turns=4), histories(max_turns=4))
