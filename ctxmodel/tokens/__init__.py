"""Token counting (contract §5): the agents' counter, exact and offline, cached per block.

``get_counter("o200k_base")`` (alias ``zoo``) is what Roo-Code and Zoo-Code count with
(``o200k_base``, fudge 1.5 once per call, domain §4.6). Any tokenizer a target may declare
(contract §7) is a name here: an encoding name (the field's fudge), ``ENCODING*FUDGE`` for the
object form ``{"encoding", "fudge"}`` (:func:`tokenizer_name` turns one into the other), or the raw
aliases ``o200k`` and ``cl100k``.
:func:`request_tokens` is the recount of contract §4: system prompt and effective history, two
calls, each with its own fudge.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodel.model import Message
    from ctxmodel.tokens.counter import (
        ACCEPTED_TOKENIZERS,
        COUNTERS,
        FIELD_FUDGE,
        Counter,
        CounterSpec,
        block_text,
        counter_spec,
        get_counter,
        image_tokens,
        tokenizer_name,
    )
    from ctxmodel.tokens.encodings import ENCODING_NAMES, EncodingError, get_encoding
    from ctxmodel.tokens.jsjson import js_stringify

#: Where each public name lives. Loaded on first use (PEP 562), so that importing
#: ``ctxmodel.tokens.jsjson`` (the codec does, for ``tool_use`` input) or naming a tokenizer does
#: not import tiktoken and the ``regex`` module: a command that never counts never pays for them.
_LAZY = {
    "ACCEPTED_TOKENIZERS": "counter",
    "COUNTERS": "counter",
    "FIELD_FUDGE": "counter",
    "Counter": "counter",
    "CounterSpec": "counter",
    "block_text": "counter",
    "counter_spec": "counter",
    "get_counter": "counter",
    "image_tokens": "counter",
    "tokenizer_name": "counter",
    "ENCODING_NAMES": "encodings",
    "EncodingError": "encodings",
    "get_encoding": "encodings",
    "js_stringify": "jsjson",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "ACCEPTED_TOKENIZERS",
    "COUNTERS",
    "ENCODING_NAMES",
    "FIELD_FUDGE",
    "Counter",
    "CounterSpec",
    "EncodingError",
    "block_text",
    "counter_spec",
    "get_counter",
    "get_encoding",
    "image_tokens",
    "js_stringify",
    "request_tokens",
    "resolve_counter",
    "tokenizer_name",
]


def resolve_counter(counter: str | Counter) -> Counter:
    """A counter from its tokenizer name (``UsageError`` listing the accepted ones when unknown) or itself."""
    from ctxmodel.tokens.counter import Counter, get_counter

    return counter if isinstance(counter, Counter) else get_counter(counter)


def request_tokens(history: Sequence[Message], system_prompt: str = "", counter: str | Counter = "zoo") -> int:
    """``count(system prompt) + count(effective history)``: the recount of contract §4.

    Two calls, each rounding its own fudge, because that is how the agents compare against their
    budget (domain §7 D9: both sides must group the same way).
    """
    from ctxmodel.visibility import effective

    c = resolve_counter(counter)
    return c.count_text(system_prompt) + c.count_messages(effective(history))
