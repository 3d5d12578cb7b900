"""The pattern language of cells: ``op:SEG/SEG/...``, ``*`` standing for any value of a segment.

Plans, exclusions and the table all speak of sets of cells by pattern; matching is one rule here so
that a pattern means the same thing wherever it is read.
"""

from __future__ import annotations

__all__ = ["matches", "within"]


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
