"""Every property, from the suites imported here by name (contract §7, §8).

The suites register their checks and declare their op on import; this module imports each one
explicitly, so the catalogue is complete whichever runner asks first and no discovery magic decides
what runs, then derives the properties every op has (purity) from the ops declared.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxmodel.properties import (  # noqa: F401  (imported to register their properties)
    suite_count,
    suite_effective,
    suite_normalize,
    suite_purity,
    suite_reasoning,
    suite_recover,
    suite_repair,
    suite_request,
    suite_trim,
    suite_trim_keeps,
)
from ctxmodel.properties.catalogue import Property, registered

__all__ = ["all_properties", "get", "select"]

suite_purity.register_purity()


def all_properties() -> list[Property]:
    return sorted(registered().values(), key=lambda p: p.id)


def get(prop_id: str) -> Property:
    return registered()[prop_id]


def select(ids: Iterable[str] = (), ops: Iterable[str] = ()) -> list[Property]:
    """Properties by id (exact, or a prefix ending in ``.``/``*``) and by op."""
    chosen = all_properties()
    id_list, op_list = list(ids), list(ops)
    if id_list:
        chosen = [p for p in chosen if any(_matches(p.id, i) for i in id_list)]
    if op_list:
        chosen = [p for p in chosen if p.op in op_list]
    return chosen


def _matches(prop_id: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return prop_id.startswith(pattern[:-1])
    return prop_id == pattern or prop_id.startswith(pattern + ".")
