"""The partition of each op's input space, derived from the contract, and who judges which cell.

Feature shares do not add up to regimes: "condensed messages" and "over budget, must degrade" each
occur, but rarely together. So the input space of ``recover``, ``effective`` and ``normalize`` is cut
into *cells* named by the contract's own distinctions, a classifier puts a drawn input in its
cells, the strategies draw the cell first (``ctxmodel.strategies``), and ``ctxmodel check
--coverage`` prints which cells each property reached.

**recover** (contract §4): one cell per request, ``recover:REGIME/VISIBLE/DEGRADABLE``.

- ``REGIME``, decided by the harness's recount and, over budget, by asking the reference (which
  measures the input, not the target): ``within`` (count < allowed), ``at-allowed`` (count ==
  allowed, §4.2), ``over-hide`` (the reference fits by hiding alone), ``over-degrade-only`` (it fits
  only by degrading, §4.5), ``over-stuck`` (progress is possible — the reference reaches one token
  under the count — but the budget is not, §4.6/§4.7), ``over-none`` (nothing can be hidden or
  shrunk), ``allowed<=0`` (§4.1), ``reserve-gap`` (``maxTokens <= 0``, over the budget but within
  ``floor(0.9W) - maxTokens``: what ``maxTokens ?? 8192`` or ``maxTokens || 8192`` would allow).
- ``VISIBLE`` (contract §2), the first that applies: ``legacy`` (a visible assistant-role marker or
  summary), ``dangling`` (a candidate carries a parent that names nothing), ``truncated`` (messages
  an existing marker hides), ``condensed`` (messages before the last summary, or hidden by an
  existing summary — after it too), ``plain``.
- ``DEGRADABLE`` (contract §4.5): the largest visible textual tool-result text over the
  200-character floor is ``dense`` (at most 400 characters, half of them beyond ASCII: where the
  notice's own length decides), ``image`` (a text item beside an image) or ``string``; ``none``
  when there is no such text. Within budget, at ``allowed <= 0`` and in the reserve gap nothing is
  to be degraded, so those cells are ``recover:REGIME/VISIBLE``.

**effective** (contract §2): one cell per parent tag of a message, ``effective:TAG/PARENT/POSITION``:
the tag (``condenseParent``, ``truncationParent``), what it names (an ``earlier-summary``, the
``last-summary``, a ``marker``, nothing: ``dangling``) and where the message is (``before`` or
``after`` the last summary; with no summary, ``after``). A history reaches the cells of all its tags.

**normalize** (contract §3): normalization works per adjacency (§3.1: the message after each
assistant message), so the visible history is cut into turns (an assistant message and the user
message after it; any other message alone) and each turn is classified by the §3 defects it holds:
``lead`` (a valid result after another block, §3.1), ``dup-result`` (§3.2), ``missing`` (§3.3),
``orphan`` (§3.4), ``dup-use`` (§3.5), ``other`` (a non-pairing defect, §3.8). A turn with none
reaches ``normalize:clean``, with one ``normalize:KIND`` (the defect alone), with several every
``normalize:A+B`` pair it holds.

A property *judges* the cells of its op that the clause it checks reads (``judged``): every recover
property has a :class:`Plan`, declared with its check, the patterns its strategy draws one of per
example (``*`` is any value) plus the patterns it reaches on the way.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from ctxmodel.contract_data import (
    BEFORE_SUMMARY,
    CONDENSED,
    DEFAULT_RESERVE,
    FLOOR_CHARS,
    TRUNCATED,
    allowed_tokens,
    existing_parents,
    hidden_reasons,
    last_summary_index,
    reserve_for,
    tool_use_ids,
    usable_window,
    window_for,
)
from ctxmodel.json_types import JsonMessageView as Msg

__all__ = [
    "CELLS",
    "DEFAULT_RESERVE",
    "DEGRADABLE",
    "EFFECTIVE_CELLS",
    "EVERY_REGIME",
    "IMPOSSIBLE",
    "NORMALIZE_CELLS",
    "NORMALIZE_KINDS",
    "RECOVER_CELLS",
    "REGIMES",
    "VISIBLE",
    "Coverage",
    "OpSummary",
    "Plan",
    "by_degradable",
    "by_visible",
    "cells_of",
    "classify",
    "declare_plan",
    "degradable_kind",
    "effective_cells",
    "hidden_reasons",
    "judged",
    "matches",
    "normalize_cells",
    "normalize_defects",
    "op_summaries",
    "pattern",
    "plan",
    "recover_cell",
    "recover_parts",
    "visible_kind",
    "window_for",
]

# -- the partition ----------------------------------------------------------------------------------

REGIMES: tuple[str, ...] = (
    "within", "at-allowed", "over-hide", "over-degrade-only", "over-stuck", "over-none", "allowed<=0", "reserve-gap",
)
#: Regimes where nothing is to be degraded: their cells do not name a ``DEGRADABLE`` value.
COLLAPSED: frozenset[str] = frozenset({"within", "at-allowed", "allowed<=0", "reserve-gap"})
VISIBLE: tuple[str, ...] = ("plain", "condensed", "truncated", "dangling", "legacy")
DEGRADABLE: tuple[str, ...] = ("string", "image", "dense", "none")

#: ``dense`` is a text just above the floor: at most this many characters.
DENSE_MAX_CHARS = 400

TAGS: tuple[str, ...] = ("condenseParent", "truncationParent")
PARENTS: tuple[str, ...] = ("earlier-summary", "last-summary", "marker", "dangling")
POSITIONS: tuple[str, ...] = ("before", "after")

#: The §3 defects, in rule order (§3.1, §3.2, §3.3, §3.4, §3.5, §3.8).
NORMALIZE_KINDS: tuple[str, ...] = ("lead", "dup-result", "missing", "orphan", "dup-use", "other")

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
EFFECTIVE_CELLS: tuple[str, ...] = tuple(
    f"effective:{t}/{p}/{q}" for t in TAGS for p in PARENTS for q in POSITIONS
)
NORMALIZE_CELLS: tuple[str, ...] = (
    "normalize:clean",
    *(f"normalize:{k}" for k in NORMALIZE_KINDS),
    *(f"normalize:{a}+{b}" for a, b in itertools.combinations(NORMALIZE_KINDS, 2)),
)
#: Every possible cell of each op that has a partition.
CELLS: dict[str, tuple[str, ...]] = {
    "recover": RECOVER_CELLS,
    "effective": EFFECTIVE_CELLS,
    "normalize": NORMALIZE_CELLS,
}


def matches(pattern: str, cell: str) -> bool:
    """Whether ``cell`` is in ``pattern``: the same op and segments, ``*`` matching any one segment."""
    op, _, rest = pattern.partition(":")
    cell_op, _, cell_rest = cell.partition(":")
    if op != cell_op:
        return False
    want, got = rest.split("/"), cell_rest.split("/")
    return len(want) == len(got) and all(w in ("*", g) for w, g in zip(want, got, strict=True))


def within(pattern: str, outer: str) -> bool:
    """Whether every cell of ``pattern`` is a cell of ``outer`` (segment by segment, ``*`` in
    ``outer`` covering anything)."""
    op, _, rest = pattern.partition(":")
    outer_op, _, outer_rest = outer.partition(":")
    if op != outer_op:
        return False
    want, got = outer_rest.split("/"), rest.split("/")
    return len(want) == len(got) and all(w in ("*", g) for w, g in zip(want, got, strict=True))


_NO_DANGLING = "inputs=agent-stored: a rewind strips every tag naming a summary or marker it removed"
_NO_STALE = "inputs=agent-stored: a summary tags only messages stored before it"
_OWN_KIND = ("inputs=agent-stored: a condenseParent names a summary and a truncationParent a marker, "
             "never the other (a tag naming neither is stripped like a dangling one)")


def excluded_by(policies: Mapping[str, str]) -> dict[str, str]:
    """The cells a declared input space leaves out (contract §7, policy ``inputs``), with the reason:
    a property is not asked to reach what the target can never be given."""
    if policies.get("inputs") != "agent-stored":
        return {}
    out = {f"effective:{tag}/dangling/{where}": _NO_DANGLING for tag in TAGS for where in POSITIONS}
    out["effective:condenseParent/earlier-summary/after"] = _NO_STALE
    out["effective:condenseParent/last-summary/after"] = _NO_STALE
    out["effective:condenseParent/marker/*"] = _OWN_KIND
    out["effective:truncationParent/earlier-summary/*"] = _OWN_KIND
    out["effective:truncationParent/last-summary/*"] = _OWN_KIND
    out["recover:*/dangling"] = _NO_DANGLING
    out["recover:*/dangling/*"] = _NO_DANGLING
    return out


def _possible(pattern: str) -> bool:
    op = pattern.partition(":")[0]
    return any(matches(pattern, c) for c in CELLS.get(op, ()))


# -- who judges what --------------------------------------------------------------------------------


@attrs.frozen
class Plan:
    """A recover property's share of the partition: ``draw`` are the patterns its strategy draws one
    of per example, uniformly; ``also`` are patterns it reaches on the way (an axis the draw fills at
    random), judged as well."""

    draw: tuple[str, ...]
    also: tuple[str, ...] = ()

    @property
    def judged(self) -> tuple[str, ...]:
        return self.draw + tuple(p for p in self.also if p not in self.draw)

    def per_regime(self, examples: int = 60) -> dict[str, float]:
        """Expected examples per regime in a run of ``examples`` (the draw is uniform over ``draw``)."""
        counts = Counter(p.partition(":")[2].split("/")[0] for p in self.draw)
        return {r: examples * counts[r] / len(self.draw) for r in REGIMES if counts[r]}


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

#: The plan of each registered property, by id. Each property declares its plan with its check
#: (``ctxmodel.properties.catalogue.check`` writes it here when it registers the property); it is
#: read by id because the fuzz report knows a property by its id alone.
_PLANS: dict[str, Plan] = {}


def declare_plan(prop_id: str, plan: Plan) -> None:
    _PLANS[prop_id] = plan


def plan(prop_id: str) -> Plan | None:
    """The plan a registered property declared (None for one without a plan)."""
    return _PLANS.get(prop_id)


def judged(prop_id: str, op: str) -> tuple[str, ...]:
    """The cells (patterns) a property judges: its plan for recover (none without one, as the fuzz
    agent loop), every cell for effective and normalize (each of their properties reads every tag and
    every defect), none for other ops."""
    declared = _PLANS.get(prop_id)
    if declared is not None:
        return declared.judged
    if op == "recover":
        return ()
    return CELLS.get(op, ())


# -- reading a history (contract §2: ``contract_data.hidden_reasons``) -----------------------------


def _blocks(message: Msg) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _is(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


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
        for block in _blocks(m):
            if not _is(block, "tool_result"):
                continue
            inner = block.get("content")
            found: list[tuple[str, str]] = []
            if isinstance(inner, str):
                found.append(("string", inner))
            elif isinstance(inner, list):
                kind = "image" if any(_is(i, "image") for i in inner) else "string"
                found.extend((kind, i["text"]) for i in inner if _is(i, "text") and isinstance(i.get("text"), str))
            for kind, text in found:
                if len(text) > FLOOR_CHARS and (best is None or len(text) > best[0]):
                    best = (len(text), kind, text)
    if best is None:
        return "none"
    length, kind, text = best
    if length <= DENSE_MAX_CHARS and _dense(text):
        return "dense"
    return kind


# -- recover ----------------------------------------------------------------------------------------


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


# -- effective --------------------------------------------------------------------------------------


def effective_cells(messages: Sequence[Msg]) -> set[str]:
    """The cell of every parent tag in the history (the last summary's own tags aside)."""
    summary_ids, marker_ids = existing_parents(messages)
    last = last_summary_index(messages)
    last_id = messages[last].get("condenseId") if last >= 0 else None
    out: set[str] = set()
    for i, m in enumerate(messages):
        if i == last:
            continue
        position = "before" if i < last else "after"
        for tag in TAGS:
            parent = m.get(tag)
            if parent is None:
                continue
            if not isinstance(parent, str):
                kind = "dangling"  # a parent names a summary or marker by a string id (contract §1)
            elif last >= 0 and parent == last_id:
                kind = "last-summary"
            elif parent in summary_ids:
                kind = "earlier-summary"
            elif parent in marker_ids:
                kind = "marker"
            else:
                kind = "dangling"
            out.add(f"effective:{tag}/{kind}/{position}")
    return out


# -- normalize --------------------------------------------------------------------------------------

_GOOD_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _other_defect(message: Msg) -> bool:
    """A defect normalization passes through (contract §3.8): an empty or blank text block, empty
    content, a malformed id, a tool_result in an assistant message or a tool_use in a user one."""
    content = message.get("content")
    if content == "" or content == []:
        return True
    for block in _blocks(message):
        if _is(block, "text") and isinstance(block.get("text"), str) and not block["text"].strip():
            return True
        if _is(block, "tool_use"):
            if message.get("role") != "assistant" or not (isinstance(block.get("id"), str)
                                                          and _GOOD_ID.match(block["id"])):
                return True
        if _is(block, "tool_result"):
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
            got = {b.get("tool_use_id") for b in _blocks(nxt) if _is(b, "tool_result")} \
                if nxt.get("role") == "user" else set()
            if any(u not in got for u in uses):
                at[i].add("missing")
        if m.get("role") != "user":
            continue
        prev = visible[i - 1] if i > 0 else None
        valid = set(tool_use_ids(prev)) if prev is not None else set()
        per_id: Counter[Any] = Counter()
        before_other = False
        for block in _blocks(m):
            if not _is(block, "tool_result"):
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


# -- any op -----------------------------------------------------------------------------------------


def classify(op: str, params: Mapping[str, Any]) -> set[str]:
    """The cells of one input of ``op`` (empty for an op without a partition). May raise on an input
    of another shape than the contract's; :func:`cells_of` does not."""
    if op == "recover":
        return {recover_cell(params)}
    if op == "effective":
        return effective_cells(params["messages"])
    if op == "normalize":
        return normalize_cells(params["messages"])
    return set()


def cells_of(op: str, params: Mapping[str, Any]) -> set[str]:
    """:func:`classify`, with ``OP:unclassified`` for an input it cannot read (a hand-written fixture)."""
    try:
        return classify(op, params)
    except Exception:
        return {f"{op}:unclassified"}


# -- the table --------------------------------------------------------------------------------------


class _Prop(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def op(self) -> str: ...


@attrs.frozen
class Row:
    """One property's coverage: examples seen, cells reached (with counts), patterns never reached."""

    id: str
    op: str
    examples: int
    reached: Mapping[str, int]
    judged: tuple[str, ...]
    never: tuple[str, ...]
    #: Judged patterns the declared input space leaves out (``excluded_by``): neither reached nor missed.
    excluded: tuple[str, ...] = ()


@attrs.define
class Coverage:
    """Cells reached per property, fed by the gate's ``on_example`` hook (``ctxmodel check --coverage``)."""

    classify: Callable[[str, Mapping[str, Any]], set[str]] = cells_of
    #: Patterns left out by the target's declared input space, with the reason (``excluded_by``).
    excluded: Mapping[str, str] = attrs.field(factory=dict)
    reached: dict[str, Counter[str]] = attrs.field(factory=dict)
    examples: Counter[str] = attrs.field(factory=Counter)

    def add(self, prop: _Prop, params: Mapping[str, Any]) -> None:
        self.examples[prop.id] += 1
        counts = self.reached.setdefault(prop.id, Counter())
        if prop.op in CELLS:
            counts.update(self.classify(prop.op, params))

    def rows(self, props: Iterable[_Prop]) -> list[Row]:
        out: list[Row] = []
        for prop in props:
            patterns = judged(prop.id, prop.op)
            if not patterns:
                continue
            counts = self.reached.get(prop.id, Counter())
            out_of_space = tuple(p for p in patterns if any(within(p, e) for e in self.excluded))
            never = tuple(p for p in patterns
                          if p not in out_of_space and not any(matches(p, c) for c in counts))
            out.append(Row(prop.id, prop.op, self.examples[prop.id], dict(counts), patterns, never, out_of_space))
        return out

    def format(self, props: Sequence[_Prop]) -> str:
        return format_table(self.rows(props), [p for p in props if not judged(p.id, p.op)], self.excluded)


def _short(cell: str) -> str:
    return cell.partition(":")[2]


def format_table(
    rows: Sequence[Row], unpartitioned: Sequence[_Prop] = (), excluded: Mapping[str, str] | None = None
) -> str:
    """The ``--coverage`` table: per property the cells it judges and reached, then per op the
    cells no property reached and the impossible ones."""
    if not rows:
        return "coverage: no property of an op with a partition (recover, effective, normalize) ran"
    width = max(len(r.id) for r in rows)
    lines = [
        "coverage: the cells of each op's input partition (ctxmodel/coverage.py) each property reached",
        f"{'property':<{width}}  examples  judged  reached  never reached",
    ]
    for r in rows:
        hit = len(r.judged) - len(r.never) - len(r.excluded)
        never = ", ".join(_short(p) for p in r.never) or "-"
        lines.append(f"{r.id:<{width}}  {r.examples:>8}  {len(r.judged):>6}  {hit:>7}  {never}")
        cells = sorted(r.reached.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.extend(_wrapped([f"{_short(c)} {n}" for c, n in cells], "    "))
    for o in op_summaries(rows, excluded or {}):
        lines.append(f"{o.op}: {o.reached} of {o.possible} possible cells reached by some property"
                     + (f"; never reached: {', '.join(o.missing)}" if o.missing else ""))
        for reason, names in o.left_out.items():
            lines.append(f"{o.op}: left out: {', '.join(names)} ({reason})")
        for reason, names in o.impossible.items():
            lines.append(f"{o.op}: impossible: {', '.join(names)} ({reason})")
    if unpartitioned:
        lines.append("no partition (not counted): " + ", ".join(p.id for p in unpartitioned))
    return "\n".join(lines)


@attrs.frozen
class OpSummary:
    """One op's cells over all its properties' rows (short names, ``op:`` dropped)."""

    op: str
    possible: int
    reached: int
    missing: tuple[str, ...]
    #: reason -> patterns the declared input space leaves out
    left_out: Mapping[str, tuple[str, ...]]
    #: reason -> cells no input can be in
    impossible: Mapping[str, tuple[str, ...]]


def _by_reason(reasons: Mapping[str, str], op: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for pattern, reason in reasons.items():
        if pattern.startswith(f"{op}:"):
            out.setdefault(reason, []).append(_short(pattern))
    return {reason: tuple(names) for reason, names in out.items()}


def op_summaries(rows: Sequence[Row], excluded: Mapping[str, str]) -> list[OpSummary]:
    """Per op with a row, the cells some property reached, those none did, and those out of reach:
    the one reading of a run's coverage (``check --coverage`` and the fuzz report print it)."""
    out: list[OpSummary] = []
    for op in CELLS:
        mine = [r for r in rows if r.op == op]
        if not mine:
            continue
        seen = {c for r in mine for c in r.reached}
        left_out = {c for c in CELLS[op] if any(matches(e, c) for e in excluded)}
        missing = tuple(_short(c) for c in CELLS[op] if c not in seen and c not in left_out)
        possible = len(CELLS[op]) - len(left_out)
        out.append(OpSummary(op, possible, possible - len(missing), missing, _by_reason(excluded, op),
                             _by_reason(IMPOSSIBLE, op)))
    return out


def _wrapped(items: Sequence[str], indent: str, width: int = 110) -> list[str]:
    lines: list[str] = []
    line = indent
    for item in items:
        piece = item if line == indent else ", " + item
        if len(line) + len(piece) > width and line != indent:
            lines.append(line + ",")
            line = indent + item
        else:
            line += piece
    if line != indent:
        lines.append(line)
    return lines
