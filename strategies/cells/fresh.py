"""Every example a fresh draw: the workaround for Hypothesis's example mutator, in one place.

Hypothesis follows each generated example with a few "mutations" that copy one part of it over
another and keep its first choices, so a cell drawn first would come back several times in a row.
The guards here are drawn right after the first choices. The one private thing they need, a flag
that lives one test case, is ``ctxmodel.hypothesis_hooks.first_ask_in_test_case``; what they rely on
of the mutator's behaviour (it replays no recorded discard, it leaves the inside of a unique list
alone) is held by ``tests/unit/test_coverage.py``'s fresh-draw test.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctxmodel.hypothesis_hooks import first_ask_in_test_case
from ctxmodel.strategies.text import memo

__all__ = ["GUARD", "ONCE", "first_choices", "novel"]


def _refuse_first(_: int) -> bool:
    """False the first time it is asked in a test case, True after (outside a test case: True)."""
    return not first_ask_in_test_case("novel")


#: One discarded draw right after the cell is chosen (its retry is kept). Hypothesis follows each
#: generated example with up to five "mutations" that copy one part of it over another and keep its
#: first choices; a cell drawn first would come back six times, and a 60-example ci run would meet
#: about 17 cells instead of 60. A mutation that replays a recorded discard is skipped before it
#: runs (Hypothesis's ``error_on_discard``), so every example draws its cell afresh. It comes after
#: the cell, not before: Hypothesis's first examples vary only their first choices. It sits in a
#: one-element unique list, whose inside the mutator leaves alone (else copying the kept draw over
#: the discarded one would replay the example itself).
GUARD = st.lists(st.integers(0, 2**16 - 1).filter(_refuse_first), min_size=1, max_size=1, unique=True)


#: The guard with a single value: once a prefix ends in it, Hypothesis never generates that prefix
#: again (the branch is exhausted). After a cell choice, it makes the cells a draw without
#: replacement: each one once before any comes back (see ``cells.recover``).
ONCE = st.lists(st.integers(0, 0).filter(_refuse_first), min_size=1, max_size=1, unique=True)


@memo
def first_choices(*sizes: int) -> st.SearchStrategy[tuple[int, ...]]:
    """One integer below each size, drawn where Hypothesis's mutator does not reach (inside a unique
    list): copying another integer of the example over a cell choice would replay the example with a
    cell no longer drawn fresh, or without replacement."""
    one = st.tuples(*(st.integers(0, n - 1) for n in sizes))
    return st.lists(one, min_size=1, max_size=1, unique=True).map(lambda chosen: chosen[0])


def novel(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``strategy``, every example of it a fresh draw rather than a mutation of the one before
    (put first choices worth varying before it, as the cell strategies here do)."""
    return st.tuples(GUARD, strategy).map(lambda pair: pair[1])
