"""The ``describe`` handshake, checked before any property runs (contract §7, §9).

A ``describe`` reply that names an unknown op, tokenizer, dialect, policy key or value, a missing or
unsupported ``protocol``, or a field of the wrong type is a start error (exit 3), in one line that
names the field, what is accepted and, for a near miss, what was probably meant. A target without
``describe`` gets the contract's defaults (see the transports).
"""

from __future__ import annotations

from typing import Any

from ctxmodel.errors import UsageError
from ctxmodel.policies import check_policies, did_you_mean
from ctxmodel.targets.base import DEFAULT_OPS, DIALECTS, OPS, Description, TargetFailure

__all__ = ["PROTOCOL", "parse_description"]

#: The protocol version this harness speaks.
PROTOCOL = 1


def _bad(message: str) -> TargetFailure:
    return TargetFailure("protocol", f"describe: {message}")


def _protocol(reply: dict[str, Any]) -> int:
    if "protocol" not in reply:
        raise _bad(f'protocol: missing; expected "protocol": {PROTOCOL}')
    value = reply["protocol"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(f"protocol: expected the number {PROTOCOL}, got {value!r}")
    if value != PROTOCOL:  # by value (contract §1): 1.0 is 1
        raise _bad(f"protocol {value!r}: not supported; expected {PROTOCOL} (the protocol ctxmodel speaks)")
    return PROTOCOL


def _ops(reply: dict[str, Any]) -> frozenset[str]:
    ops = reply.get("ops", sorted(DEFAULT_OPS))
    if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
        raise _bad(f"ops: expected an array of op names, some of {', '.join(OPS)}; got {ops!r}"[:300])
    for op in ops:
        if op not in OPS:
            raise _bad(f"ops: unknown op {op!r}{did_you_mean(op, OPS)}; expected some of {', '.join(OPS)}")
    return frozenset(ops) | {"describe"}


#: The ops defined on every dialect (contract §7): the others read Anthropic messages only.
_EVERY_DIALECT = frozenset({"describe", "trim", "count"})


def _dialect(reply: dict[str, Any], ops: frozenset[str]) -> str:
    """The declared message format, ``anthropic`` unless said; a target in another dialect offers only
    the ops defined on it (contract §7), since the others' properties would judge it on Anthropic messages."""
    value = reply.get("dialect", DIALECTS[0])
    if not isinstance(value, str) or value not in DIALECTS:
        shown = value if isinstance(value, str) else repr(value)
        hint = did_you_mean(value, DIALECTS) if isinstance(value, str) else ""
        raise _bad(f"dialect {shown!r}: unknown dialect{hint}; expected one of {', '.join(DIALECTS)}"[:300])
    if value != DIALECTS[0] and ops - _EVERY_DIALECT:
        raise _bad(f"dialect {value}: ops {', '.join(sorted(ops - _EVERY_DIALECT))} are defined on Anthropic "
                   f"messages only; a {value} target offers some of {', '.join(sorted(_EVERY_DIALECT))}")
    if isinstance(reply.get("policies"), dict) and "dialect" in reply["policies"]:
        raise _bad('policies: dialect: declared as describe\'s own "dialect", not among the policies')
    return value


def _tokenizer(reply: dict[str, Any]) -> str:
    from ctxmodel.tokens import tokenizer_name

    value = reply.get("tokenizer", "zoo")
    if not isinstance(value, str | dict):
        raise _bad(f'tokenizer: expected an encoding name or {{"encoding", "fudge"}}, got {value!r}'[:300])
    try:
        return tokenizer_name(value, "tokenizer")
    except UsageError as exc:
        raise _bad(str(exc)) from None


def parse_description(reply: Any, fallback_name: str) -> Description:
    """A ``describe`` reply checked against contract §7; anything wrong is a ``TargetFailure``
    (``protocol``) whose message is one line. The tokenizer is stored by its canonical name
    (``ctxmodel.tokens.tokenizer_name``), which every counter lookup accepts."""
    if not isinstance(reply, dict):
        raise _bad(f"expected an object, got {type(reply).__name__}")
    protocol = _protocol(reply)
    name = reply.get("name", fallback_name)
    version = reply.get("version", "")
    for key, value in (("name", name), ("version", version)):
        if not isinstance(value, str):
            raise _bad(f"{key}: expected a string, got {value!r}"[:300])
    ops = _ops(reply)
    dialect = _dialect(reply, ops)
    tokenizer = _tokenizer(reply)
    try:
        policies = check_policies(reply.get("policies", {}), "policies")
    except UsageError as exc:
        raise _bad(str(exc)) from None
    if "dialect" in reply:
        policies["dialect"] = dialect
    return Description(
        name=name,
        version=version,
        ops=ops,
        tokenizer=tokenizer,
        policies=policies,
        protocol=protocol,
    )
