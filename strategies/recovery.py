"""Recovery requests whose budget is chosen relative to the history's own count (contract §4).

A fixed ``contextWindow`` would leave almost every drawn history "within budget"; here the history
(and system prompt) is drawn first, counted with the harness's counter (contract §5), and then the
budget is placed where the case needs it: within (the equal-count edge included), a little over,
far over, impossible (a giant first or last visible message no truncation may hide), and
``allowed <= 0``; independently ``maxTokens <= 0`` (reserve 8192).

Inside a case a *shape* may be drawn (``RECOVERY_SHAPES``): an input family the case's generic draw
almost never produces, though field bugs hide exactly there (domain §3; the bug zoo and the
mutation survivors). Each shape is a few per cent of all draws and shrinks away to the generic draw
(its selector is a small integer whose 0 means "no shape"). Giant texts are a few thousand
characters against a budget placed just below them, not megabytes: big relative to a small
``contextWindow`` is all a case needs, and it keeps counting and shrinking cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from ctxmodel.codec import load
from ctxmodel.contract_data import (
    BEFORE_SUMMARY,
    CONDENSED,
    DEFAULT_RESERVE,
    allowed_tokens,
    reserve_for,
    usable_window,
    window_for,
)
from ctxmodel.json_types import JsonMessageView as Msg
from ctxmodel.strategies.blocks import image_blocks, tool_use_blocks
from ctxmodel.strategies.cells import cell_requests
from ctxmodel.strategies.histories import SUMMARY_PREFIX, TS_BASE, histories, marker_text, well_formed_histories
from ctxmodel.strategies.ids import make_unique
from ctxmodel.strategies.labels import PAIRING_TARGET, safe_target, visibility
from ctxmodel.strategies.text import chance, giant_texts, pick, texts
from ctxmodel.tokens import get_counter, request_tokens

__all__ = [
    "DEFAULT_RESERVE",
    "RECOVERY_CASES",
    "RECOVERY_SHAPES",
    "allowed_tokens",
    "count_messages",
    "count_request",
    "recovery_case",
    "recovery_requests",
    "recovery_shapes",
]

#: The cases of contract §4 a request can be in, in shrink order.
RECOVERY_CASES: tuple[str, ...] = ("within", "little-over", "far-over", "impossible", "allowed<=0")

#: Shapes drawn inside a case: ``shape -> {case: per cent of that case's draws}``. Each is an input
#: family the generic draw of its case almost never makes, and where a known field bug hides:
#:
#: - ``condensed-within``: messages a summary hides, within budget by at most 3 tokens (a recount that
#:   counts condensed messages cuts a history that fits; contract §2, §4.2; domain §3.2).
#: - ``reserve-gap``: ``maxTokens < 0`` and a count between ``floor(0.9W) - 8192`` and
#:   ``floor(0.9W) - maxTokens`` (Roo's ``maxTokens || 8192``; contract §4.1; domain §3.1).
#: - ``degrade``: 1-3 tool results of 201-300 characters, then a last call whose giant result
#:   (string, or a text item beside an image) may sit beside a medium one, on a budget degradation
#:   alone reaches and truncation alone does not (a notice must never grow a block, images are never
#:   cut: contract §4.5; domain §3.7). Most giants mix prose with dense text (emoji, arbitrary code
#:   points), so a prefix's characters per token differ from the whole's.
#: - ``single-giant``: one task, one tool_use, one giant result: nothing may be hidden, only
#:   degradation helps (domain §3.7; contract §4.3, §4.5).
#: - ``marker-in-pair``: an earlier truncation's marker between a tool_use and its results, with the
#:   bulk after it, so a new cut must span the old marker (contract §4.3, §4.4).
#: - ``impossible-long``: an impossible request over five or more visible messages (a failure leaves
#:   every message as it was, contract §4.8; a half-truncation shows only from five on).
#:
#: Degradation gets the largest share: a bug there shows only when several choices meet (list
#: content, a prose-then-dense giant, a budget in the right band), and most over-budget properties
#: run on the mixed draw, where the over cases are two fifths.
RECOVERY_SHAPES: dict[str, dict[str, int]] = {
    "condensed-within": {"within": 35},
    "reserve-gap": {"little-over": 25},
    "degrade": {"little-over": 45, "far-over": 40},
    "single-giant": {"little-over": 20, "far-over": 20},
    "marker-in-pair": {"far-over": 15},
    "impossible-long": {"impossible": 60},
}

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


def _result_texts(message: Msg) -> list[tuple[str, bool]]:
    """Each textual tool-result text of a message, with whether its result also holds an image."""
    out: list[tuple[str, bool]] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        inner = block.get("content")
        if isinstance(inner, str):
            out.append((inner, False))
        elif isinstance(inner, list):
            image = any(isinstance(i, dict) and i.get("type") == "image" for i in inner)
            out.extend((i["text"], image) for i in inner
                       if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str))
    return out


def _dense(text: str) -> bool:
    """Prose and dense text together: ASCII words, and at least a fifth of the characters beyond ASCII."""
    wide = sum(1 for c in text if ord(c) > 127)
    return " " in text and len(text) // 5 <= wide < len(text) - len(text) // 5


def recovery_shapes(request: Mapping[str, Any]) -> set[str]:
    """Which shapes a request has, judged from the request itself (however it was drawn).

    The names of ``RECOVERY_SHAPES``, except that ``degrade`` shows as its parts: ``degrade-image``
    (a giant text beside an image in the last visible message), ``degrade-floor`` (a 201-300 character
    result before a giant one) and ``dense-mix`` (a giant text mixing prose and dense text).
    """
    messages = request["messages"]
    case = recovery_case(request)
    allowed = allowed_tokens(request["contextWindow"], request["maxTokens"])
    hidden = visibility(messages)
    visible = [m for m, h in zip(messages, hidden, strict=True) if h is None]
    over = case in ("little-over", "far-over")
    found: set[str] = set()
    if case == "within" and any(h in (CONDENSED, BEFORE_SUMMARY) for h in hidden):
        if allowed - count_request(messages, request.get("systemPrompt", "")) <= 3:
            found.add("condensed-within")
    if request["maxTokens"] < 0 and over:
        count = count_request(messages, request.get("systemPrompt", ""))
        if count <= usable_window(request["contextWindow"]) - request["maxTokens"]:
            found.add("reserve-gap")
    if case == "impossible" and len(visible) >= 5:
        found.add("impossible-long")
    if not over:
        return found
    texts_in_order = [t for m in visible for t in _result_texts(m)]
    if visible and any(len(t) > 1000 and image for t, image in _result_texts(visible[-1])):
        found.add("degrade-image")  # a giant text item beside an image, where only degradation reaches
    big_at = [k for k, (t, _) in enumerate(texts_in_order) if len(t) > 1000]
    if big_at and any(200 < len(t) <= 300 for t, _ in texts_in_order[: big_at[-1]]):
        found.add("degrade-floor")  # a result a notice would grow, before one worth cutting
    if any(len(t) > 1000 and _dense(t) for t, _ in texts_in_order):
        found.add("dense-mix")
    roles = [m.get("role") for m in messages]
    if roles == ["user", "assistant", "user"] and any(len(t) > 1000 for t, _ in _result_texts(messages[2])):
        if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in messages[1].get("content") or []):
            found.add("single-giant")
    for i in range(1, len(messages) - 1):
        prev, nxt = messages[i - 1], messages[i + 1]
        if messages[i].get("isTruncationMarker") is True and prev.get("role") == "assistant":
            ids = {b.get("id") for b in prev.get("content") or []
                   if isinstance(b, dict) and b.get("type") == "tool_use"}
            content = nxt.get("content")
            if ids and isinstance(content, list) and any(
                    isinstance(b, dict) and b.get("tool_use_id") in ids for b in content):
                found.add("marker-in-pair")
    return found


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


# -- shapes ------------------------------------------------------------------------------------------

#: Notice allowance (tokens) when placing a budget that degradation alone must reach.
_NOTICE_SLACK = 60


@st.composite
def _shape(draw: st.DrawFn, case: str) -> str | None:
    """The shape for ``case``, or None (the generic draw). One integer: shrinking it to 0 drops the shape."""
    shapes = [(name, shares[case]) for name, shares in RECOVERY_SHAPES.items() if case in shares]
    n = draw(st.integers(0, 99))
    edge = 100 - sum(share for _, share in shapes)
    if n < edge:
        return None
    for name, share in shapes:
        edge += share
        if n < edge:
            return name
    return None


def _ids_in(messages: Sequence[Msg]) -> set[str]:
    used: set[str] = set()
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict):
                    for key in ("id", "tool_use_id"):
                        if isinstance(b.get(key), str):
                            used.add(b[key])
    return used


def _ending_in_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The drawn history, ready for an assistant turn: a task when empty, a user line after an assistant."""
    out = [dict(m) for m in messages]
    if not out:
        out.append({"role": "user", "content": "Please fix the failing test."})
    elif out[-1].get("role") != "user":
        out.append({"role": "user", "content": "go on"})
    return out


@st.composite
def _degrade_parts(draw: st.DrawFn, single: bool) -> tuple[list[str], str, bool, int, str | None]:
    """(small result texts, giant text, giant as a list beside an image, image position, medium text)."""
    small = [] if single else draw(st.lists(texts(min_size=201, max_size=300, kinds=("prose", "code")),
                                            min_size=1, max_size=3))
    giant = draw(giant_texts())
    as_list = not draw(chance(15))  # list content (an image beside the text) unless drawn off
    image_at = draw(st.integers(0, 2))  # 0: after the text, 1: before it, 2: before it and a short text after
    medium = None if single or not draw(chance(50)) else draw(
        texts(min_size=400, max_size=1200, kinds=("prose", "code")))
    return small, giant, as_list, image_at, medium


@st.composite
def _degrade_builder(draw: st.DrawFn, messages: list[dict[str, Any]], single: bool) -> Any:
    """A function from the giant text to the history, so the budget can be placed by a recount."""
    # The drawn history before the calls in 40%: its own big results would otherwise be cut first.
    after_history = not single and draw(chance(40))
    small, giant, as_list, image_at, medium = draw(_degrade_parts(single))
    image = draw(image_blocks())
    # A screenshot after the results (where well-formed histories put images): recovery keeps it.
    screenshot = draw(image_blocks()) if draw(chance(50)) else None
    base = _ending_in_user(messages if after_history else [])
    used = _ids_in(base)
    uses = {key: draw(tool_use_blocks(make_unique(f"toolu_{key}", used)))
            for key in [f"s{j}" for j in range(len(small))] + ["g"] + (["m"] if medium is not None else [])}

    def build(text: str) -> list[dict[str, Any]]:
        out = [dict(m) for m in base]
        for j, body in enumerate(small):
            use = uses[f"s{j}"]
            out.append({"role": "assistant", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": use["id"], "content": body}
            out.append({"role": "user", "content": [result]})
        content: Any = text
        if as_list:
            items: list[dict[str, Any]] = [{"type": "text", "text": text}]
            items.insert(0 if image_at else 1, image)
            if image_at == 2:
                items.append({"type": "text", "text": "exit code 1"})
            content = items
        last_uses = [uses["g"]] + ([uses["m"]] if medium is not None else [])
        results = [{"type": "tool_result", "tool_use_id": uses["g"]["id"], "content": content}]
        if medium is not None:
            results.append({"type": "tool_result", "tool_use_id": uses["m"]["id"], "content": medium})
        out.append({"role": "assistant", "content": last_uses})
        out.append({"role": "user", "content": results + ([dict(screenshot)] if screenshot else [])})
        return out

    return build, giant


@st.composite
def _marker_in_pair(draw: st.DrawFn, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An old marker between a tool_use and its results, then the bulk, then a short last message."""
    out = _ending_in_user(messages)
    used = _ids_in(out)
    tid = "trunc-old"
    hidden = draw(st.integers(0, 2))
    for j in range(hidden):
        out.append({"role": "assistant" if j % 2 == 0 else "user", "content": f"old step {j}",
                    "truncationParent": tid})
    if hidden % 2:
        out.append({"role": "user", "content": "continue"})
    use = draw(tool_use_blocks(make_unique("toolu_m", used)))
    marker_role = "assistant" if draw(chance(20)) else "user"
    out.append({"role": "assistant", "content": [use]})
    out.append({"role": marker_role, "content": marker_text(hidden), "isTruncationMarker": True, "truncationId": tid})
    out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"],
                                             "content": draw(texts(max_size=300, kinds=("prose",)))}]})
    for _ in range(draw(st.integers(1, 3))):
        out.append({"role": "assistant", "content": draw(texts(min_size=300, max_size=1500, kinds=("prose", "code")))})
        out.append({"role": "user", "content": draw(texts(min_size=50, max_size=800, kinds=("prose",)))})
    out.append({"role": "assistant", "content": "done"})
    out.append({"role": "user", "content": "thanks"})
    return out


@st.composite
def _condensed(draw: st.DrawFn, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history with some messages hidden by a summary (added when none hides any)."""
    if any(h in (CONDENSED, BEFORE_SUMMARY) for h in visibility(messages)):
        return messages
    out = [dict(m) for m in messages] or [{"role": "user", "content": draw(texts(min_size=1, max_size=200))}]
    cut = draw(st.integers(1, len(out)))
    for m in out[:cut]:
        m.setdefault("condenseParent", "cond-w")
    out.insert(cut, {"role": "user", "content": [{"type": "text", "text": SUMMARY_PREFIX + "the task so far."}],
                     "isSummary": True, "condenseId": "cond-w"})
    return out


def _restamped(messages: list[dict[str, Any]], like: Sequence[Msg]) -> list[dict[str, Any]]:
    """Timestamps on every message, as ``histories()`` gives them, when the drawn history had them.

    Messages a shape adds would otherwise be the only ones without ``ts``; a target keying state by
    ``ts`` (domain §1.3) must meet them there too.
    """
    if not any("ts" in m for m in like):
        return messages
    return [{**m, "ts": TS_BASE + 1000 * i} for i, m in enumerate(messages)]


def _padded(messages: list[dict[str, Any]], visible: int = 5) -> list[dict[str, Any]]:
    """The history with short turns appended until ``visible`` messages are visible."""
    out = [dict(m) for m in messages]
    while sum(h is None for h in visibility(out)) < visible:
        role = "assistant" if out and out[-1].get("role") == "user" else "user"
        out.append({"role": role, "content": "ok" if role == "assistant" else "next"})
    return out


@st.composite
def _requests(draw: st.DrawFn, history: st.SearchStrategy[list[dict[str, Any]]], cases: tuple[str, ...],
              nonpositive_max_tokens: bool, shapes: bool) -> dict[str, Any]:
    # Claim the history's steering label with a constant first, so its ``target()`` is skipped: hill
    # climbing toward pairing defects mutates the history and keeps the rest of the draw, and in a
    # 60-example run it held about four draws in five in the first case (within budget), starving
    # every property that judges an over-budget recovery.
    safe_target(0.0, PAIRING_TARGET)
    messages = draw(history)
    drawn = messages
    case = draw(pick(cases))
    shape = draw(_shape(case)) if shapes else None
    system_prompt = draw(st.one_of(st.just(""), texts(max_size=80),
                                   texts(min_size=500, max_size=5000)))
    if shape == "reserve-gap":
        max_tokens = draw(st.integers(-10, -1))
    elif nonpositive_max_tokens and draw(chance(15)):
        max_tokens = draw(st.integers(-10, 0))
    else:
        max_tokens = draw(pick((4096, 8192, 16384, 64000, 1, 100)))
    reserve = reserve_for(max_tokens)
    degrade_floor: int | None = None
    kept_count = 0
    if shape in ("degrade", "single-giant"):
        build, giant = draw(_degrade_builder(messages, shape == "single-giant"))
        messages = _restamped(build(giant), drawn)
        # The count with the giant cut to 1000 characters: degradation alone reaches it (contract §4.5).
        degrade_floor = count_request(build(giant[:1000]), system_prompt) + _NOTICE_SLACK
        # What the deepest cut keeps (the first visible message and the last pair): below it, a
        # recovery must degrade the giant, not only hide what precedes it (contract §4.3).
        first = next(m for m, h in zip(messages, visibility(messages), strict=True) if h is None)
        kept_count = count_request([first, *(m for m in messages[-2:] if m is not first)], system_prompt)
    elif shape == "marker-in-pair":
        messages = _restamped(draw(_marker_in_pair(messages)), drawn)
    elif shape == "condensed-within":
        messages = _restamped(draw(_condensed(messages)), drawn)
    elif shape == "impossible-long":
        messages = _restamped(_padded(messages), drawn)
    if shape is None and case in ("impossible", "far-over", "little-over"):
        low = 300 if case == "little-over" else 3000
        giant = draw(texts(min_size=low, max_size=10 * low, kinds=("prose", "code", "nospace", "onechar")))
        if case == "impossible":
            messages = _with_giant(messages, giant, at_end=draw(st.booleans()))
        else:
            messages = _with_big_middle_result(messages, giant)
    elif shape == "impossible-long":
        giant = draw(texts(min_size=1500, max_size=6000, kinds=("prose", "code", "nospace", "onechar")))
        messages = _with_giant(messages, giant, at_end=draw(st.booleans()))
    total = count_request(messages, system_prompt)
    if case == "allowed<=0":
        window = draw(st.integers(1, max(1, window_for(1, reserve) - 1)))  # up to the last window with no room
        if draw(chance(30)):
            # The boundary itself: allowed == 0 exactly, sometimes with nothing to count (a count
            # of 0 is "within" a budget of 0, so only the rule of contract §4.1 makes it an error).
            edge = window_for(0, reserve)
            window = edge if usable_window(edge) - reserve == 0 else window
            if draw(chance(50)):
                # As little as a history can hold: contract §4 gives recover a non-empty history.
                messages, system_prompt = [{"role": "user", "content": "."}], ""
    else:
        if shape == "condensed-within":
            target_allowed = total + draw(st.integers(0, 3))
        elif case == "within":
            target_allowed = total if draw(chance(25)) else total + draw(st.integers(0, 2 * total + 100))
        elif degrade_floor is not None:
            top = total - total // 10 - 1
            high = min(top, kept_count - _NOTICE_SLACK)
            if degrade_floor <= high:
                target_allowed = draw(st.integers(degrade_floor, high))
            else:
                target_allowed = draw(st.integers(degrade_floor, top)) if degrade_floor <= top else max(1, total - 1)
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
        window = window_for(target_allowed, reserve)
    request = {"messages": messages, "contextWindow": window, "maxTokens": max_tokens, "systemPrompt": system_prompt}
    if currently_in_test_context():
        event(f"recovery: {recovery_case(request)}")
        if max_tokens <= 0:
            event("recovery: maxTokens<=0")
        if shape is not None:
            event(f"recovery shape: {shape}")
    return request


def recovery_requests(
    *,
    history: st.SearchStrategy[list[dict[str, Any]]] | None = None,
    broken: bool | None = None,
    cases: Sequence[str] = RECOVERY_CASES,
    nonpositive_max_tokens: bool = True,
    shapes: bool = True,
    cells: Sequence[str] | None = None,
    focus: Sequence[str] = (),
) -> st.SearchStrategy[dict[str, Any]]:
    """``{"messages", "contextWindow", "maxTokens", "systemPrompt"}`` covering every case of contract §4.

    ``history`` overrides where messages come from; otherwise ``broken`` picks ``histories()``
    (True), ``well_formed_histories()`` (False) or either (None, the default). ``cases`` restricts
    the intended case (the label names the case the recount actually finds). No ``target()`` here:
    steering toward "more over budget" would starve the within and little-over cases. ``shapes=False``
    leaves out the shapes of ``RECOVERY_SHAPES`` (each drawn inside its cases).

    ``cells`` draws by ``ctxmodel.partition``'s partition instead of ``cases`` and shapes: each request
    is in one of these patterns of recover cells (``recover:over-stuck/*/dense``, any value for
    ``*``), the pattern drawn first, uniformly or (half the random draws) among ``focus``
    (``ctxmodel.strategies.cells.cell_requests``).
    """
    if focus and cells is None:
        raise ValueError("recovery_requests: focus= needs cells=")
    if cells is not None:
        if tuple(cases) != RECOVERY_CASES or not shapes or not nonpositive_max_tokens:
            raise ValueError("recovery_requests: cells= replaces cases=, shapes= and nonpositive_max_tokens=")
        body = history
        if body is None and broken is not None:
            body = histories() if broken else well_formed_histories()
        return cell_requests(cells, body, focus)
    if history is None:
        if broken is None:
            history = st.one_of(well_formed_histories(), histories())
        else:
            history = histories() if broken else well_formed_histories()
    unknown = set(cases) - set(RECOVERY_CASES)
    if unknown:
        raise ValueError(f"recovery_requests: unknown case(s) {sorted(unknown)}; expected {RECOVERY_CASES}")
    return _requests(history, tuple(cases), nonpositive_max_tokens, shapes)
