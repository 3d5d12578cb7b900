"""The reference's own ops as a ``python:`` target: the plainest valid implementation.

The broken witnesses (``broken_*.py``) and the other legitimate variants (``variant_*.py``) start
from these functions and change one thing, so that a property failing on a witness fails for the
one thing that was broken.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel import codec
from ctxmodel.recover import allowed_tokens
from ctxmodel.targets import reference as ref

Params = dict[str, Any]
ALL_OPS = ["describe", "normalize", "effective", "request", "recover", "count"]


def description(name: str, policies: dict[str, str] | None = None, ops: list[str] | None = None) -> Params:
    return {
        "protocol": 1,
        "name": name,
        "version": "1",
        "ops": ops or ALL_OPS,
        "tokenizer": "zoo",
        "policies": policies if policies is not None else dict(ref.REFERENCE_POLICIES),
    }


def describe(params: Params) -> Params:
    return description("variant-reference")


def normalize(params: Params) -> Params:
    return ref.op_normalize(params)


def effective(params: Params) -> Params:
    return ref.op_effective(params)


def request(params: Params) -> Params:
    return ref.op_request(params)


def recover(params: Params) -> Params:
    return ref.op_recover(params)


def count(params: Params) -> Params:
    return ref.op_count(params)


class Reference:
    """The same ops as a class, so a variant or witness (``python:module:Class``) overrides one."""

    name = "variant-reference"
    policies: ClassVar[dict[str, str]] = dict(ref.REFERENCE_POLICIES)
    ops: ClassVar[list[str]] = ALL_OPS

    def describe(self, params: Params) -> Params:
        return description(self.name, dict(self.policies), list(self.ops))

    def normalize(self, params: Params) -> Params:
        return ref.op_normalize(params)

    def effective(self, params: Params) -> Params:
        return ref.op_effective(params)

    def request(self, params: Params) -> Params:
        return ref.op_request(params)

    def recover(self, params: Params) -> Params:
        return ref.op_recover(params)

    def count(self, params: Params) -> Params:
        return ref.op_count(params)


# -- helpers for the variants and witnesses --------------------------------------------------------


def allowed(params: Params) -> int:
    return int(allowed_tokens(int(params["contextWindow"]), int(params.get("maxTokens", 0))))


def recount(messages: list[Params], system_prompt: str = "") -> int:
    """The harness's count: system prompt plus the reference effective history (contract §4)."""
    from ctxmodel.tokens import get_counter, request_tokens

    return int(request_tokens(codec.load(messages), system_prompt, get_counter("zoo")))


def visible(messages: list[Params]) -> list[bool]:
    from ctxmodel.visibility import visible_mask

    return visible_mask(codec.load(messages))


def failed(params: Params, why: str) -> Params:
    """A controlled error (contract §4.8): the input unchanged, the text the contract gives."""
    tokens = recount(params["messages"], params.get("systemPrompt", ""))
    return {
        "messages": params["messages"],
        "error": f"Context window recovery failed: {why}",
        "messagesRemoved": 0,
        "prevContextTokens": tokens,
        "newContextTokens": tokens,
        "truncationId": None,
    }
