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

**trim** (contract §10, §10.1, §10.8), in every dialect: ``trim:POINT/SHAPE``, the budget point
the request was drawn at (``fits``, ``one-turn``, ``last-turn``, ``floor``, ``impossible``,
``anywhere``, ``suffix-cut``, ``prefix-cut``) and each binding the history holds: ``pair``,
``parallel`` calls, an ``unanswered`` call, an ``orphan`` result, ``reasoning-call`` and
``reasoning-message`` (reasoning bound to the call or the answer it produced), ``plain`` for none.
A history reaches the cell of each of its shapes.

A property *judges* the cells of its op that the clause it checks reads (``judged``): every recover
property has a :class:`Plan`, declared with its check, the patterns its strategy draws one of per
example (``*`` is any value) plus the patterns it reaches on the way.

One module per op holds its cells and its classifier (``recover``, ``effective``, ``normalize``,
``trim``);
``patterns`` is the pattern language they share, ``classifier`` the classifier over every op and the
cells a declared input space leaves out, ``plans`` who judges what, ``table`` the ``--coverage``
table. This package's names are the public face; the modules import one another, never it.
"""

from __future__ import annotations

from ctxmodel.contract_data import DEFAULT_RESERVE, hidden_reasons, window_for
from ctxmodel.partition.classifier import CELLS, cells_of, classify, excluded_by
from ctxmodel.partition.effective import EFFECTIVE_CELLS, PARENTS, POSITIONS, TAGS, effective_cells
from ctxmodel.partition.normalize import NORMALIZE_CELLS, NORMALIZE_KINDS, normalize_cells, normalize_defects
from ctxmodel.partition.patterns import matches, within
from ctxmodel.partition.plans import Plan, declare_plan, judged, plan
from ctxmodel.partition.recover import (
    COLLAPSED,
    DEGRADABLE,
    DENSE_MAX_CHARS,
    EVERY_REGIME,
    IMPOSSIBLE,
    RECOVER_CELLS,
    REGIMES,
    VISIBLE,
    by_degradable,
    by_visible,
    degradable_kind,
    pattern,
    progress_possible,
    recover_cell,
    recover_parts,
    reference_recover,
    request_count,
    visible_kind,
)
from ctxmodel.partition.table import Coverage, OpSummary, Row, format_table, op_summaries
from ctxmodel.partition.trim import POINTS as TRIM_POINTS
from ctxmodel.partition.trim import SHAPES as TRIM_SHAPES
from ctxmodel.partition.trim import TRIM_CELLS, history_shapes, trim_cells

__all__ = [
    "CELLS",
    "COLLAPSED",
    "DEFAULT_RESERVE",
    "DEGRADABLE",
    "DENSE_MAX_CHARS",
    "EFFECTIVE_CELLS",
    "EVERY_REGIME",
    "IMPOSSIBLE",
    "NORMALIZE_CELLS",
    "NORMALIZE_KINDS",
    "PARENTS",
    "POSITIONS",
    "RECOVER_CELLS",
    "REGIMES",
    "TAGS",
    "TRIM_CELLS",
    "TRIM_POINTS",
    "TRIM_SHAPES",
    "VISIBLE",
    "Coverage",
    "OpSummary",
    "Plan",
    "Row",
    "by_degradable",
    "by_visible",
    "cells_of",
    "classify",
    "declare_plan",
    "degradable_kind",
    "effective_cells",
    "excluded_by",
    "format_table",
    "hidden_reasons",
    "history_shapes",
    "judged",
    "matches",
    "normalize_cells",
    "normalize_defects",
    "op_summaries",
    "pattern",
    "plan",
    "progress_possible",
    "recover_cell",
    "recover_parts",
    "reference_recover",
    "request_count",
    "trim_cells",
    "visible_kind",
    "window_for",
    "within",
]
