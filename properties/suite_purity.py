"""Purity, for every op a target offers (contract §1).

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

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, check
from ctxmodel.properties.judge import first_difference

#: Keys whose fresh values are created ids, not state.
_ID_KEYS = frozenset(
    {"truncationId", "truncationParent", "condenseId", "condenseParent", "id", "tool_use_id", "messageId"}
)


def _histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories

    return st.builds(lambda messages: {"messages": messages}, histories())


def _normalize_histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """What ``normalize.*`` draws: turns in each cell of the normalize partition (issue 13)."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import normalize_histories

    return st.builds(lambda messages: {"messages": messages}, normalize_histories())


def _effective_histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """Histories holding chosen cells of the effective partition (issue 13)."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import effective_histories

    return st.builds(lambda messages: {"messages": messages}, effective_histories())


def _recovery(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """Every regime of contract §4, one in eight each (``ctxmodel.coverage.RECOVER_PLANS``)."""
    from ctxmodel.coverage import plan
    from ctxmodel.strategies import recovery_requests

    return recovery_requests(cells=plan("purity.recover").draw)


def _counting(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories, texts

    return st.builds(lambda messages, system: {"messages": messages, "systemPrompt": system}, histories(), texts())


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


_PARAMS = {
    "normalize": _normalize_histories,
    "effective": _effective_histories,
    "request": _histories,
    "recover": _recovery,
    "count": _counting,
}

for _op, _params in _PARAMS.items():
    check(
        f"purity.{_op}",
        op=_op,
        clause="contract §1",
        summary=f"{_op} never mutates its input and answers the same request the same way twice.",
        params=_params,
    )(_purity(_op))
