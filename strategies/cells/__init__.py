"""Inputs drawn cell first: the cell of ``ctxmodel.partition``'s partition, then an input in it.

Hoping a random history lands in "over budget, must degrade, with condensed messages" leaves that
cell to luck; here the cell is the first choice and the input is built around it:

- ``recovery_requests(cells=PATTERNS)`` (``cell_requests``): a pattern of ``recover`` cells, then a
  stored history drawn as usual (``histories()`` or ``well_formed_histories()``) laid out for the
  visible kind (hidden by a summary, by a marker, dangling tags, legacy markers), a last tool turn
  holding what can be degraded, and a budget placed for the regime by recounting and by asking the
  reference how far hiding and degrading reach (``ctxmodel.partition``). Within a cell the draw also
  varies what the cell's name does not fix but the contract turns on: how cheap the characters a cut
  removes are (§4.5), how many cuts the budget takes against a converging target's calls (§4.7),
  hidden messages stored between a call and its results and ids a hidden and a visible result share
  (§2: visibility is by message, never by id or by stored neighbour), old tool turns the cut itself
  hides (§4.5: what is degraded was visible);
- ``effective_histories()``: a few (tag, parent, position) cells, then a drawn history given the
  summaries, marker and tagged messages they name;
- ``normalize_histories()``: a stored history without pairing defects, then per turn a cell (clean,
  one §3 defect, or two) and the defects injected into that turn.

Every draw labels what it reached with ``event("cell: NAME")`` (measured by the classifier, not
taken from the draw), which the fuzz report's coverage table reads.
"""

from ctxmodel.strategies.cells.effective import effective_histories
from ctxmodel.strategies.cells.fresh import GUARD, ONCE, novel
from ctxmodel.strategies.cells.normalize import normalize_histories
from ctxmodel.strategies.cells.pieces import label_cells
from ctxmodel.strategies.cells.recover import cell_requests

__all__ = ["GUARD", "ONCE", "cell_requests", "effective_histories", "label_cells", "normalize_histories", "novel"]
