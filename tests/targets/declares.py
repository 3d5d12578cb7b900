"""The reference's ops under other ``describe`` declarations (contract §7): the tokenizer by its
encoding name or as an object, and declarations the handshake must refuse before any property runs.

``O200kBase`` and ``O200kObject`` count exactly what the reference counts (``o200k_base`` with the
field's fudge of 1.5), so they must pass every property; ``RawObject`` declares and counts raw
tokens (fudge 1). The others are refused at the handshake, each in one line.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Params, Reference


class O200kBase(Reference):
    name = "declares-o200k-base"
    tokenizer: ClassVar[Any] = "o200k_base"
    extra: ClassVar[dict[str, Any]] = {}

    def describe(self, params: Params) -> Params:
        return {**super().describe(params), "tokenizer": self.tokenizer, **self.extra}


class O200kObject(O200kBase):
    name = "declares-o200k-object"
    tokenizer: ClassVar[Any] = {"encoding": "o200k_base", "fudge": 1.5}


class RawObject(O200kBase):
    """Counts raw ``o200k_base`` tokens, as it declares, in ``count`` and in ``recover``."""

    name = "declares-raw"
    tokenizer: ClassVar[Any] = {"encoding": "o200k_base", "fudge": 1}

    def count(self, params: Params) -> Params:
        from ctxmodel import codec
        from ctxmodel.tokens import get_counter

        counter = get_counter("o200k_base*1")
        system = params.get("systemPrompt", "")
        return {"tokens": counter.count_text(system) + counter.count_messages(codec.load(params["messages"]))}

    def recover(self, params: Params) -> Params:
        from ctxmodel import codec
        from ctxmodel.recover import recover

        result = recover(
            codec.load(params["messages"]),
            context_window=params["contextWindow"],
            max_tokens=params.get("maxTokens", 0),
            system_prompt=params.get("systemPrompt", ""),
            counter="o200k_base*1",
        )
        out: Params = result.to_json()
        return out


class UnknownTokenizer(O200kBase):
    name = "declares-unknown-tokenizer"
    tokenizer: ClassVar[Any] = "o200k-base"


class UnknownPolicy(O200kBase):
    name = "declares-unknown-policy"
    extra: ClassVar[dict[str, Any]] = {"policies": {**ref.REFERENCE_POLICIES, "orphan": "to_text"}}


class UnknownPolicyValue(O200kBase):
    name = "declares-unknown-policy-value"
    extra: ClassVar[dict[str, Any]] = {"policies": {"orphans": "totext"}}


class UnknownOp(O200kBase):
    name = "declares-unknown-op"
    extra: ClassVar[dict[str, Any]] = {"ops": ["describe", "normalise"]}


class NoProtocol(O200kBase):
    name = "declares-no-protocol"

    def describe(self, params: Params) -> Params:
        return {k: v for k, v in super().describe(params).items() if k != "protocol"}


class ProtocolTwo(O200kBase):
    name = "declares-protocol-two"
    extra: ClassVar[dict[str, Any]] = {"protocol": 2}


class WrongTypes(O200kBase):
    name = "declares-wrong-types"
    extra: ClassVar[dict[str, Any]] = {"version": 3}


class NormalizeOnly(O200kBase):
    """A correct target that offers normalize and nothing else."""

    name = "declares-normalize-only"
    ops: ClassVar[list[str]] = ["describe", "normalize"]
