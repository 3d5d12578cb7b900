"""The request a target would send passes the API oracle (contract §6, §7 ``request``).

Judged on ``well_formed_histories()`` only: contract §7 does not ask ``request`` to repair arbitrary
stored histories (agents repair when they append, not when they send), and on a broken history the
request is judged through recovery instead (§4.4). The request judged is the target's own: its
``request`` op, else its ``normalize`` of its ``effective``, else its ``effective`` — never our
``normalize`` applied to its output.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check, declare_op
from ctxmodel.properties.json_reading import messages_of


def _well_formed(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    from ctxmodel.strategies import well_formed_histories

    # thinking=False: well_formed_histories puts thinking on only some tool turns, while the oracle
    # requires it on the last one whenever any assistant message carries thinking; until the two
    # agree, judging them together would fail every target (the reference included) for nothing.
    return st.builds(lambda messages: {"messages": messages}, well_formed_histories(thinking=False))


def _request_call(probe: Probe, params: dict[str, Any]) -> Exchange:
    """The target's request pipeline as one exchange: its ``request``, else its ``normalize`` of its
    ``effective``, else its ``effective`` (contract §4.4, §7)."""
    return Exchange("request", params, {"messages": probe.request(params["messages"])})


def _histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """What every op's properties draw for request (purity): any history, broken ones included."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories

    return st.builds(lambda messages: {"messages": messages}, histories())


#: The broken targets of the ops but recover and normalize (``tests/targets/broken_ops.py``).
_P = "python:tests.targets.broken_ops"

declare_op("request", params=_histories, purity_witnesses=(
    Witness(f"{_P}:RemembersToolUses", "answers-differently"),
    Witness(f"{_P}:MutatesInput", "mutates-input"),
))


@check(
    "request.oracle",
    op="request",
    clause="contract §6, §7",
    summary="On histories a correct agent stores, the request the target would send passes the API oracle.",
    params=_well_formed,
    requires=(),
    call=_request_call,
    witnesses=(Witness(f"{_P}:TextBeforeResults", "missing-tool-result"),
               Witness("python:tests.targets.broken_wire:CapsTextsByUnits", "lone-surrogate")),
)
def request_oracle(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    if not any(probe.has(op) for op in ("request", "normalize", "effective")):
        return  # nothing of the target's own would be judged
    from ctxmodel.properties.wire import judged_request

    request = messages_of(ex.result, "request")
    violations = judged_request(ex.params["messages"], request)  # less what the caller brought (domain §5.6)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        yield Finding.fail(
            f"the request the target would send is rejected: {first.message}{more}",
            "a history a correct agent stores gives a request the API accepts (§6, §7)",
            code=first.rule,
        )


