"""The shape of a property and the registry of all of them (contract §7, §8).

A property is data: a stable id (``normalize.results-lead``), the op it exercises, the contract
clause it checks, the policies it follows, a strategy for the op's params, and a check. The check
drives the target through a ``Probe`` (which records every call, so a failure can be written as a
fixture of what was sent and what came back) and returns findings: a ``fail`` breaks the gate, a
``warn`` is listed. Runners (``ctxmodel check``, the pytest plugin, ``ctxmodel fuzz``, replay) only
ever see this module's types, never a suite's internals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol

import attrs
from hypothesis.strategies import SearchStrategy

__all__ = ["Finding", "Probe", "Property", "all_properties", "get", "register", "select"]

Severity = Literal["fail", "warn"]


@attrs.frozen
class Finding:
    """One thing a check found. ``message`` names the message and block (``messages.3.content.1``)
    in one or two sentences; ``expected`` says what the contract requires instead, when useful."""

    severity: Severity
    message: str
    expected: str | None = None

    @classmethod
    def fail(cls, message: str, expected: str | None = None) -> Finding:
        return cls("fail", message, expected)

    @classmethod
    def warn(cls, message: str, expected: str | None = None) -> Finding:
        return cls("warn", message, expected)


class Probe(Protocol):
    """How a check talks to the target under test (implemented in ``ctxmodel.properties.probe``)."""

    policies: Mapping[str, str]
    tokenizer: str

    def has(self, op: str) -> bool: ...

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        """Call the target (declared policies added to the params), recording the exchange."""
        ...

    def effective(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The target's ``effective`` if it has one, else the reference's (contract §4)."""
        ...

    def request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The request the target would send: its ``request``, else its own ``normalize`` of its
        ``effective``, else its ``effective`` — never our normalize on its output (contract §4.4)."""
        ...

    def recount(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        """The harness's own count: system prompt plus effective history (contract §4, §5)."""
        ...


Check = Callable[[Probe, dict[str, Any]], Iterable[Finding]]
ParamsStrategy = Callable[[Mapping[str, str]], SearchStrategy[dict[str, Any]]]


def _to_frozenset(ops: Iterable[str]) -> frozenset[str]:
    return frozenset(ops)


@attrs.frozen
class Property:
    id: str
    #: The op whose output is judged (the fixture's ``op``).
    op: str
    #: The contract clause, as ``contract §3.1`` or ``domain §7 A10``.
    clause: str
    summary: str
    params: ParamsStrategy
    check: Check
    #: Ops the target must offer for this property to apply (else it is skipped, and said so).
    requires: frozenset[str] = attrs.field(converter=_to_frozenset, factory=frozenset)
    #: Policy keys the check reads.
    policies: tuple[str, ...] = ()


_REGISTRY: dict[str, Property] = {}


def register(prop: Property) -> Property:
    if prop.id in _REGISTRY and _REGISTRY[prop.id] is not prop:
        raise ValueError(f"duplicate property id {prop.id}")
    _REGISTRY[prop.id] = prop
    return prop


def _load_suites() -> None:
    # The suites register themselves on import; importing here keeps the registry complete
    # whichever runner asks first.
    import importlib
    import pkgutil

    import ctxmodel.properties

    for info in pkgutil.iter_modules(ctxmodel.properties.__path__):
        if info.name.startswith("suite_"):
            importlib.import_module(f"ctxmodel.properties.{info.name}")


def all_properties() -> list[Property]:
    _load_suites()
    return sorted(_REGISTRY.values(), key=lambda p: p.id)


def get(prop_id: str) -> Property:
    _load_suites()
    return _REGISTRY[prop_id]


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
