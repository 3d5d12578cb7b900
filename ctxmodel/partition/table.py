"""The ``check --coverage`` table: the cells each property reached, fed one drawn input at a time,
and its one reading per op (printed by ``check --coverage`` and the fuzz report).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from ctxmodel.partition.classifier import CELLS, cells_of
from ctxmodel.partition.patterns import matches, within
from ctxmodel.partition.plans import judged
from ctxmodel.partition.recover import IMPOSSIBLE

__all__ = ["Coverage", "OpSummary", "Row", "format_table", "op_summaries"]


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

    def judged_cells(self, props: Iterable[_Prop]) -> dict[str, tuple[int, int]]:
        """Per partitioned property, the cells it judged and the cells it can judge (its patterns
        the declared input space keeps): the summary's ``cells`` column."""
        return {
            row.id: (len(row.judged) - len(row.never) - len(row.excluded), len(row.judged) - len(row.excluded))
            for row in self.rows(props)
        }

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
        return "coverage: no property of an op with a partition (recover, effective, normalize, trim) ran"
    width = max(len(r.id) for r in rows)
    lines = [
        "coverage: the cells of each op's input partition (ctxmodel/partition/) each property reached",
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
