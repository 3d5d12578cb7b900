"""Who judges which cells: each recover property's :class:`Plan`, declared with its check, and the
cells any property judges.
"""

from __future__ import annotations

from collections import Counter

import attrs

from ctxmodel.partition.classifier import CELLS
from ctxmodel.partition.recover import REGIMES

__all__ = ["Plan", "declare_plan", "judged", "plan"]


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
