"""Who judges which cells: each recover property's :class:`Plan`, declared with its check, and the
cells any property judges.
"""

from __future__ import annotations

import attrs

from ctxmodel.partition.classifier import CELLS
from ctxmodel.partition.recover import REGIMES

__all__ = ["Plan", "declare_plan", "judged", "plan"]


@attrs.frozen
class Plan:
    """A recover property's share of the partition: ``draw`` are the patterns its strategy draws one
    of per example; ``also`` are patterns it reaches on the way (an axis the draw fills at random),
    judged as well; ``focus``, some of ``draw``: where the property's failures can only lie (a hidden
    result beside one that must be cut, a cut that must be made).

    Half the examples take every pattern of ``draw`` once, in turn; the other half draw one at
    random, from ``focus`` in half of those draws where there is one. A failure that a single
    pattern of eleven holds is then met in a sixth of a run's examples, not an eleventh: the rare
    regime is drawn more often by construction, and every pattern is still met."""

    draw: tuple[str, ...]
    also: tuple[str, ...] = ()
    focus: tuple[str, ...] = attrs.field(default=())

    @focus.validator
    def _focus_is_drawn(self, _: object, value: tuple[str, ...]) -> None:
        if not set(value) <= set(self.draw):
            raise ValueError(f"Plan: focus {sorted(set(value) - set(self.draw))} is not among the drawn patterns")

    @property
    def judged(self) -> tuple[str, ...]:
        return self.draw + tuple(p for p in self.also if p not in self.draw)

    def shares(self) -> dict[str, float]:
        """Each drawn pattern's expected share of the examples (see the class docstring)."""
        uniform = 1 / len(self.draw)
        if not self.focus:
            return {p: uniform for p in self.draw}
        return {p: 0.75 * uniform + (0.25 / len(self.focus) if p in self.focus else 0.0) for p in self.draw}

    def per_regime(self, examples: int = 60) -> dict[str, float]:
        """Expected examples per regime in a run of ``examples``."""
        counts: dict[str, float] = {}
        for p, share in self.shares().items():
            regime = p.partition(":")[2].split("/")[0]
            counts[regime] = counts.get(regime, 0.0) + examples * share
        return {r: counts[r] for r in REGIMES if counts.get(r)}


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
