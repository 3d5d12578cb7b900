"""Purity, for every op a target offers (contract §1), derived from each op's declaration.

Two observations, because a target is reached through different transports: a Python target that
writes into the params it was handed leaves the marks in the object the probe sent (compared with
the copy it recorded before the call); any target, a process included, must answer the same request
twice the same way — what it returns never depends on hidden state from earlier requests. Ids and
timestamps it creates (a ``truncationId``, a marker's ``ts``) may differ between the two answers:
they come from its factories, not from state.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, check, declared_ops
from ctxmodel.properties.json_reading import first_difference
from ctxmodel.targets.base import OPS

#: Keys whose fresh values are created ids, not state.
_ID_KEYS = frozenset(
    {"truncationId", "truncationParent", "condenseId", "condenseParent", "id", "tool_use_id", "messageId"}
)


def _known(value: Any, strings: set[str], numbers: set[float]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _known(v, strings, numbers)
    elif isinstance(value, list):
        for v in value:
            _known(v, strings, numbers)
    elif isinstance(value, str):
        strings.add(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        numbers.add(value)


def without_fresh_values(result: Any, params: Mapping[str, Any]) -> Any:
    """``result`` with ids and timestamps that are not in ``params`` numbered in order of appearance,
    so two answers compare equal when they differ only by what their factories created."""
    strings: set[str] = set()
    numbers: set[float] = set()
    _known(params, strings, numbers)
    names: dict[str, str] = {}

    def walk(value: Any, key: str | None) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, None) for v in value]
        if key in _ID_KEYS and isinstance(value, str) and value not in strings:
            return names.setdefault(value, f"<new id {len(names)}>")
        if key == "ts" and isinstance(value, int | float) and value not in numbers:
            return "<new ts>"
        return value

    return walk(result, None)


def _purity(op: str) -> Any:
    def judge(probe: Probe, ex: Exchange) -> Iterator[Finding]:
        first = ex.result
        if ex.mutated is not None:
            yield Finding.fail(
                f"{op} mutated its input: {ex.mutated.removeprefix('params.')} changed during the call",
                "a target never mutates its input, nested objects included (§1)",
                code="mutates-input",
            )
            return
        second = probe.call(op, ex.params)
        a, b = without_fresh_values(first, ex.params), without_fresh_values(second, ex.params)
        if a != b:
            where = first_difference(a, b, "result") or "result"
            yield Finding.fail(
                f"{op} answered the same request differently the second time, first at {where.removeprefix('result.')}",
                "what a target returns never depends on hidden state from earlier requests (§1)",
                code="answers-differently",
            )

    judge.__name__ = f"purity_{op}"
    return judge


def register_purity() -> None:
    """One purity property per op of contract §7 (``OPS``; ``describe``, the handshake, takes no
    params), drawing the params its suite declared (``declare_op``) and caught by the broken targets
    declared with them. An op no suite declares is an error here, not a property that never runs."""
    ops = declared_ops()
    for op in OPS:
        if op == "describe":
            continue
        if op not in ops:
            raise LookupError(f"op {op} has no suite declaring its params (declare_op)")
        check(
            f"purity.{op}",
            op=op,
            clause="contract §1",
            summary=f"{op} never mutates its input and answers the same request the same way twice.",
            params=ops[op].params,
            witnesses=ops[op].purity_witnesses,
        )(_purity(op))
