"""The shape of a property: its inputs plus a check of one exchange (contract §7, §8).

A property is one record: a stable id (``normalize.results-lead``), the op it judges, the contract
clause, the policies it follows, a strategy for the op's params, for a recover property the cells
of the partition it judges (its :class:`~ctxmodel.partition.Plan`, which its strategy draws from), the
broken targets it must catch (its witnesses), and a check. Everything that lists properties
(``ctxmodel properties``, ``PROPERTIES.md``, the coverage table, the witness test) reads the record.

The engine makes the primary call once and hands the check the ``Exchange`` (op, params, result); a
check may make follow-up calls through the ``Probe`` where the contract needs them (idempotence,
convergence, purity, the target's own request of a recovered history). Because a check judges an
exchange rather than making it, every runner judges with the same checks: the gate, ``replay``, the
pytest plugin and the fuzz agent loop, whose calls are exchanges like any other.

Findings are values with a kind: the property plus a short ``code`` for what went wrong. Distinct
kinds are distinct failures, each shrunk and kept on its own (contract §8).

An op's own record (:class:`OpInputs`, ``declare_op``, once in its suite) holds what every property
of the op shares: the strategy of its params, the policy keys all of them read, the broken targets
that break purity for it (the properties every op has are derived from it,
``ctxmodel.properties.suite_purity``), and how a failing request's budget follows the messages the
minimizer drops (``rebudget``). A property declares only what is its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol

import attrs
from hypothesis.strategies import SearchStrategy

from ctxmodel.partition import EVERY_REGIME, Plan, declare_plan

__all__ = [
    "Exchange", "Finding", "OpInputs", "Probe", "Property", "Rebudget", "RebudgetFor", "TargetCount", "Witness",
    "check", "declare_op", "declared_ops", "plan_params", "registered",
]

Severity = Literal["fail", "warn"]


@attrs.frozen
class Finding:
    """One thing a check found. ``message`` names the message and block (``messages.3.content.1``)
    in one or two sentences; ``expected`` says what the contract requires instead; ``code`` tells
    this kind of failure from the property's other kinds (``result-after-image``), so that two bugs
    that break the same rule in different ways are both reported."""

    severity: Severity
    message: str
    expected: str | None = None
    code: str = ""

    @classmethod
    def fail(cls, message: str, expected: str | None = None, *, code: str = "") -> Finding:
        return cls("fail", message, expected, code)

    @classmethod
    def warn(cls, message: str, expected: str | None = None, *, code: str = "") -> Finding:
        return cls("warn", message, expected, code)


@attrs.frozen
class Exchange:
    """One call a check judges: the op, the params as the property drew them (policies are the
    probe's), the target's reply, and where the target mutated the params it was handed, if it did
    (contract §1)."""

    op: str
    params: dict[str, Any]
    result: Any
    mutated: str | None = None
    #: The history the op's rules are judged against when a declared policy rewrites it before the
    #: rules apply (``mergeUsers=yes`` joins consecutive user messages); ``None``: ``params`` as sent.
    judged: list[Any] | None = None


class Probe(Protocol):
    """How a check talks to the target under test (implemented in ``ctxmodel.properties.probe``)."""

    policies: Mapping[str, str]
    tokenizer: str

    def has(self, op: str) -> bool: ...

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        """Call the target (declared policies added to the params), recording the exchange."""
        ...

    def exchange(self, op: str, params: dict[str, Any]) -> Exchange:
        """``call``, returned as an ``Exchange`` with the mutation the call made, if any."""
        ...

    def effective(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The target's ``effective`` if it has one, else the contract's visibility (contract §4)."""
        ...

    def request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The request the target would send: its ``request``, else its own ``normalize`` of its
        ``effective``, else its ``effective`` — never our normalize on its output (contract §4.4)."""
        ...

    def count(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        """The harness's count of messages as given, under the declared tokenizer (contract §5)."""
        ...

    def recount(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        """The harness's own count: system prompt plus effective history (contract §4, §5)."""
        ...

    def raw_text(self, text: str) -> int:
        """Tokens of one text under the declared tokenizer, without the fudge (contract §4.5)."""
        ...

    def raw_block(self, block: dict[str, Any]) -> int:
        """Tokens of one content block as the counter counts it, without the fudge (contract §4.5)."""
        ...


Check = Callable[[Probe, Exchange], Iterable[Finding]]
Caller = Callable[[Probe, dict[str, Any]], Exchange]
ParamsStrategy = Callable[[Mapping[str, str]], SearchStrategy[dict[str, Any]]]


@attrs.frozen
class Witness:
    """A broken target the property must catch (``tests/quality/test_witnesses.py`` runs every one): a property
    no target can fail is a bug. ``target`` is a spec the gate opens
    (``python:tests.targets.broken_recover:DeletesHidden``); ``code`` is the finding code the run must
    meet (``""`` for a check's one uncoded kind, ``target-exception`` for a target that crashes);
    ``severity`` ``warn`` for a bug the contract only warns about."""

    target: str
    code: str
    severity: Severity = "fail"


def plan_params(plan: Plan, name: str = "params_of_plan") -> ParamsStrategy:
    """Requests in the cells of contract §4 that ``plan`` draws, the cell drawn first, then a request in
    it (``ctxmodel.strategies.cells``): every pattern of the plan meets a 60-example ci run."""

    def params(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
        from ctxmodel.strategies import recovery_requests

        return recovery_requests(cells=plan.draw, focus=plan.focus)

    params.__name__ = params.__qualname__ = name
    return params


def _primary_call(op: str) -> Caller:
    def call(probe: Probe, params: dict[str, Any]) -> Exchange:
        return probe.exchange(op, params)

    return call


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
    requires: frozenset[str] = frozenset()
    #: Policy keys the check reads.
    policies: tuple[str, ...] = ()
    #: How the engine makes the one call the check judges; by default the op itself.
    call: Caller | None = None
    #: A property that only ever warns (contract §4.8, §4.9): its findings fail only a strict run.
    warning: bool = False
    #: The cells of its op's partition it judges and its strategy draws (recover; ``ctxmodel.partition``).
    plan: Plan | None = None
    #: The broken targets it must catch, each with the finding code it must produce.
    witnesses: tuple[Witness, ...] = ()
    #: The dialects (contract §7) whose targets it judges; every dialect when empty. Another
    #: dialect's target is skipped before anything is drawn: its inputs would not be its messages.
    dialects: frozenset[str] = frozenset()

    def inputs(self, policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
        """The params strategy in the input space the target declared (policy ``inputs``, contract §7)."""
        from ctxmodel.strategies.stored import restrict

        return restrict(self.params(policies), policies.get("inputs", "any"))

    def primary(self, probe: Probe, params: dict[str, Any]) -> Exchange:
        return (self.call or _primary_call(self.op))(probe, params)


_REGISTRY: dict[str, Property] = {}


def check(
    id: str,
    *,
    op: str,
    clause: str,
    summary: str,
    params: ParamsStrategy | None = None,
    policies: tuple[str, ...] = (),
    requires: Iterable[str] | None = None,
    call: Caller | None = None,
    warning: bool = False,
    plan: Plan | None = None,
    witnesses: Iterable[Witness] = (),
    dialects: Iterable[str] = (),
) -> Callable[[Check], Check]:
    """The one way to register a property: decorate its check. Ids are unique; ``requires`` defaults
    to the op itself. A recover property judges every regime of contract §4 unless it declares a
    ``plan``, and draws its params from its plan unless it declares ``params``; any other property
    draws its op's declared params unless it declares its own. The policy keys its op declares are
    read by every property of the op, before its own."""
    if plan is None and op == "recover":
        plan = Plan(EVERY_REGIME)
    declared = _OPS.get(op)
    if params is None and plan is not None:
        params = plan_params(plan, f"params_of_{id.replace('.', '_').replace('-', '_')}")
    if params is None:
        if declared is None:
            raise ValueError(f"property {id}: a {op} property declares its params, or its op declares them")
        params = declared.params
    if declared is not None:
        policies = tuple(dict.fromkeys((*declared.policies, *policies)))
    drawn, witnessed = params, tuple(witnesses)

    def register(fn: Check) -> Check:
        if id in _REGISTRY:
            raise ValueError(f"duplicate property id {id}")
        if plan is not None:
            declare_plan(id, plan)
        _REGISTRY[id] = Property(
            id=id,
            op=op,
            clause=clause,
            summary=summary,
            params=drawn,
            check=fn,
            requires=frozenset({op} if requires is None else requires),
            policies=policies,
            call=call,
            warning=warning,
            plan=plan,
            witnesses=witnessed,
            dialects=frozenset(dialects),
        )
        return fn

    return register


def registered() -> dict[str, Property]:
    """The properties registered so far; ``ctxmodel.properties.registry`` imports every suite first."""
    return dict(_REGISTRY)


#: The target's own count of some messages (and a system prompt, or None), or None for a target
#: without ``count``: what a budget drawn as a place is resolved with.
TargetCount = Callable[[list[dict[str, Any]], "str | None"], int]
#: The smaller request the minimizer tries (``after``, less some messages of ``before``) with its
#: budget lowered by what those messages counted, so that it is as far over budget as ``before``; or
#: None to judge the drop as it stands.
Rebudget = Callable[[dict[str, Any], dict[str, Any]], "dict[str, Any] | None"]
#: An op's ``Rebudget``, made for one failing kind from the target's count, the policies and the
#: declared tokenizer.
RebudgetFor = Callable[["TargetCount | None", Mapping[str, str], str], Rebudget]


@attrs.frozen
class OpInputs:
    """An op as its suite declares it: the strategy of its params, which the properties every op has
    draw (purity, contract §1), the policy keys every property of it reads, the broken targets that
    break purity for this op, and how its budget follows a minimized request."""

    op: str
    params: ParamsStrategy
    purity_witnesses: tuple[Witness, ...]
    policies: tuple[str, ...] = ()
    rebudget: RebudgetFor | None = None


_OPS: dict[str, OpInputs] = {}


def declare_op(
    op: str, *, params: ParamsStrategy, purity_witnesses: Iterable[Witness], policies: tuple[str, ...] = (),
    rebudget: RebudgetFor | None = None,
) -> None:
    """Declare an op, once, in its suite, before its properties."""
    if op in _OPS:
        raise ValueError(f"op {op} declared twice")
    _OPS[op] = OpInputs(op, params, tuple(purity_witnesses), policies, rebudget)


def declared_ops() -> dict[str, OpInputs]:
    """The ops declared so far; ``ctxmodel.properties.registry`` imports every suite first."""
    return dict(_OPS)
