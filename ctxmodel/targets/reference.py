"""The built-in target: ctxmodel's own implementation behind the op interface (contract §7).

The reference is driven exactly like any other target (dict in, dict out), so the property suites
judge it with the same code they judge Roo-Code or a Node process with; it gets no private path.
The modules it wraps are imported on first use so that opening the reference (and the pytest
plugin) stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

import ctxmodel
from ctxmodel import codec
from ctxmodel.errors import CtxmodelError, describe_exception
from ctxmodel.targets.base import OPS, TargetFailure

__all__ = ["REFERENCE_POLICIES", "REFERENCE_TRIM_POLICIES", "ReferenceTarget", "describe"]

#: The reference's own choices (contract §3, §4 "Reference:" paragraphs): stricter than the defaults.
REFERENCE_POLICIES: dict[str, str] = {
    "orphans": "drop",
    "trailing": "leave",
    "resultOrder": "tool_use",
    "recoverSuccess": "fits",
}

#: The reference trimmer's choices (contract §10 "Reference choices"): system messages and the last
#: user message kept, no message cut, a budget in tokens.
REFERENCE_TRIM_POLICIES: dict[str, str] = {
    "trimSystem": "keep",
    "trimLastUser": "keep",
    "trimPartial": "no",
    "trimBudget": "tokens",
}

#: The ops the reference offers in the Chat Completions dialect (contract §7: the others read
#: Anthropic messages).
CHAT_OPS: tuple[str, ...] = ("describe", "trim", "count")

#: An op: the request's params and the name of the counter the target declared (contract §5, §7).
Op = Callable[[dict[str, Any], str], dict[str, Any]]


def describe(params: dict[str, Any], tokenizer: str = "zoo", dialect: str = "anthropic") -> dict[str, Any]:
    chat = dialect != "anthropic"
    return {
        "protocol": 1,
        "name": "ctxmodel-reference",
        "version": ctxmodel.__version__,
        "ops": list(CHAT_OPS if chat else OPS),
        "tokenizer": tokenizer,
        "dialect": dialect,
        "policies": dict(REFERENCE_TRIM_POLICIES) if chat else {**REFERENCE_POLICIES, **REFERENCE_TRIM_POLICIES},
    }


def _messages(params: Mapping[str, Any]) -> ctxmodel.History:
    if "messages" not in params:
        raise TargetFailure("error-reply", "params.messages: expected an array of messages, got nothing")
    return codec.load(params["messages"])


def _normalize_options(params: Mapping[str, Any]) -> dict[str, str]:
    """The §3 policies the reference can honour; ``any``/``relabel`` allow dropping, so they drop."""
    policies = params.get("policies") or {}
    orphans = policies.get("orphans", REFERENCE_POLICIES["orphans"])
    trailing = policies.get("trailing", REFERENCE_POLICIES["trailing"])
    return {
        "orphans": "to_text" if orphans == "to_text" else "drop",
        "trailing": "close" if trailing == "close" else "leave",
    }


def op_effective(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    from ctxmodel.visibility import effective

    return {"messages": codec.dump(effective(_messages(params)))}


def op_normalize(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    from ctxmodel.normalize import normalize

    return {"messages": codec.dump(normalize(_messages(params), **_normalize_options(params)))}


def op_request(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §3 (CLI paragraph): the request is ``normalize(effective(H))``."""
    from ctxmodel.normalize import normalize
    from ctxmodel.visibility import effective

    history = effective(_messages(params))
    return {"messages": codec.dump(normalize(history, **_normalize_options(params)))}


def op_repair(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """A stored history the agent can load again, whose request the API accepts (``ctxmodel repair``)."""
    from ctxmodel.repair import repair

    repaired, _ = repair(_messages(params))
    return {"messages": codec.dump(repaired)}


def _int(params: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TargetFailure("error-reply", f"params.{key}: expected an integer, got {value!r}")
    return value


def op_recover(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    from ctxmodel.recover import recover

    total = params.get("totalTokens")
    system_prompt = params.get("systemPrompt", "")
    if not isinstance(system_prompt, str):
        raise TargetFailure("error-reply", "params.systemPrompt: expected a string")
    result = recover(
        _messages(params),
        context_window=_int(params, "contextWindow"),
        max_tokens=_int(params, "maxTokens", 0),
        system_prompt=system_prompt,
        total_tokens=None if total is None else _int(params, "totalTokens"),
        counter=counter,
    )
    out: dict[str, Any] = result.to_json()
    return out


def op_count(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §5: system prompt and messages counted by two calls, each with the fudge once.

    The messages are counted as given (not their effective history): ``count`` is the counter, and
    the harness applies visibility itself when it recounts a recovery (contract §4).
    """
    from ctxmodel.tokens import get_counter

    counting = get_counter(counter)
    system_prompt = params.get("systemPrompt", "")
    if not isinstance(system_prompt, str):
        raise TargetFailure("error-reply", "params.systemPrompt: expected a string")
    return {"tokens": counting.count_text(system_prompt) + counting.count_messages(_messages(params))}


def _budget(params: Mapping[str, Any]) -> int | None:
    return None if params.get("maxTokens") is None else _int(params, "maxTokens")


def op_trim(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10, Anthropic dialect: the budget counts the messages with the system prompt."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.trimming import trim

    counting = get_counter(counter)
    system_prompt = params.get("systemPrompt", "")
    if not isinstance(system_prompt, str):
        raise TargetFailure("error-reply", "params.systemPrompt: expected a string")
    if "messages" not in params:
        raise TargetFailure("error-reply", "params.messages: expected an array of messages, got nothing")
    prompt_tokens = counting.count_text(system_prompt)

    def count(messages: list[dict[str, Any]]) -> int:
        return prompt_tokens + counting.count_messages(codec.load(messages, copy=False))

    result = trim(params["messages"], dialect="anthropic", max_tokens=_budget(params), count=count,
                  policies=params.get("policies") or {})
    return result.to_json()


def op_chat_trim(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10, Chat Completions dialect: system messages are messages, counted with the rest."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.tokens.chat import count_chat
    from ctxmodel.trimming import trim

    counting = get_counter(counter)
    if "messages" not in params:
        raise TargetFailure("error-reply", "params.messages: expected an array of messages, got nothing")
    result = trim(params["messages"], dialect="openai-chat", max_tokens=_budget(params),
                  count=lambda messages: count_chat(counting, messages), policies=params.get("policies") or {})
    return result.to_json()


def op_chat_count(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10 "Reference choices": Chat Completions messages counted by ``ctxmodel.tokens.chat``."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.tokens.chat import count_chat

    messages = params.get("messages")
    if not isinstance(messages, list):
        raise TargetFailure("error-reply", "params.messages: expected an array of messages")
    return {"tokens": count_chat(get_counter(counter), messages)}


def op_responses_trim(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10, Responses dialect: the ``input`` items, system and developer messages among them."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.tokens.responses import count_responses
    from ctxmodel.trimming import trim

    counting = get_counter(counter)
    if "messages" not in params:
        raise TargetFailure("error-reply", "params.messages: expected an array of input items, got nothing")
    result = trim(params["messages"], dialect="openai-responses", max_tokens=_budget(params),
                  count=lambda items: count_responses(counting, items), policies=params.get("policies") or {})
    return result.to_json()


def op_responses_count(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10 "Reference choices": Responses items counted by ``ctxmodel.tokens.responses``."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.tokens.responses import count_responses

    items = params.get("messages")
    if not isinstance(items, list):
        raise TargetFailure("error-reply", "params.messages: expected an array of input items")
    return {"tokens": count_responses(get_counter(counter), items)}


def _system_prompt(params: dict[str, Any]) -> str:
    system = params.get("systemPrompt", "")
    if not isinstance(system, str):
        raise TargetFailure("error-reply", "params.systemPrompt: expected a string")
    return system


#: A dialect's count of its messages with the system prompt apart: (counter, messages, system) -> tokens.
SystemApartCount = Callable[[Any, list[Any], str], int]


def _trim_system_apart(params: dict[str, Any], counter: str, dialect: str, count_with: SystemApartCount,
                       noun: str) -> dict[str, Any]:
    """Contract §10 where the system prompt is a param of its own, counted with the messages."""
    from ctxmodel.tokens import get_counter
    from ctxmodel.trimming import trim

    counting = get_counter(counter)
    system = _system_prompt(params)
    if "messages" not in params:
        raise TargetFailure("error-reply", f"params.messages: expected an array of {noun}, got nothing")
    result = trim(params["messages"], dialect=dialect, max_tokens=_budget(params),
                  count=lambda messages: count_with(counting, messages, system),
                  policies=params.get("policies") or {})
    return result.to_json()


def _count_system_apart(params: dict[str, Any], counter: str, count_with: SystemApartCount,
                        noun: str) -> dict[str, Any]:
    from ctxmodel.tokens import get_counter

    messages = params.get("messages")
    if not isinstance(messages, list):
        raise TargetFailure("error-reply", f"params.messages: expected an array of {noun}")
    return {"tokens": count_with(get_counter(counter), messages, _system_prompt(params))}


def op_converse_trim(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10, Bedrock Converse dialect: the system prompt is apart, counted with the messages."""
    from ctxmodel.tokens.converse import count_converse

    return _trim_system_apart(params, counter, "bedrock-converse", count_converse, "messages")


def op_converse_count(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10 "Reference choices": Converse messages (and system prompt) by ``ctxmodel.tokens.converse``."""
    from ctxmodel.tokens.converse import count_converse

    return _count_system_apart(params, counter, count_converse, "messages")


def op_gemini_trim(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10, Gemini dialect: the contents; the system instruction apart, counted with them."""
    from ctxmodel.tokens.gemini import count_gemini

    return _trim_system_apart(params, counter, "gemini", count_gemini, "contents")


def op_gemini_count(params: dict[str, Any], counter: str = "zoo") -> dict[str, Any]:
    """Contract §10 "Reference choices": Gemini contents (and system instruction) by ``ctxmodel.tokens.gemini``."""
    from ctxmodel.tokens.gemini import count_gemini

    return _count_system_apart(params, counter, count_gemini, "contents")


_OPS: dict[str, Op] = {
    "describe": describe,
    "normalize": op_normalize,
    "effective": op_effective,
    "request": op_request,
    "repair": op_repair,
    "recover": op_recover,
    "count": op_count,
    "trim": op_trim,
}

_CHAT_OPS: dict[str, Op] = {"trim": op_chat_trim, "count": op_chat_count}
_RESPONSES_OPS: dict[str, Op] = {"trim": op_responses_trim, "count": op_responses_count}
_CONVERSE_OPS: dict[str, Op] = {"trim": op_converse_trim, "count": op_converse_count}
_GEMINI_OPS: dict[str, Op] = {"trim": op_gemini_trim, "count": op_gemini_count}
#: Each dialect's ops (contract §7: the ops other than trim and count read Anthropic messages).
_DIALECT_OPS: dict[str, dict[str, Op]] = {"anthropic": _OPS, "openai-chat": _CHAT_OPS,
                                          "openai-responses": _RESPONSES_OPS, "bedrock-converse": _CONVERSE_OPS,
                                          "gemini": _GEMINI_OPS}


class ReferenceTarget:
    """``reference``: in-process, no copies needed (the codec copies at both boundaries).

    ``dialect`` (``reference:openai-chat``, ``reference:openai-responses``) is the message format it
    declares and reads (contract §7): outside Anthropic it offers ``trim`` and ``count`` only.

    ``tokenizer`` is any declaration contract §7 accepts (``zoo`` unless given): the reference then
    counts and recovers with that counter, as an agent configured for another model would. It is
    read again inside every call, so the counter the reference uses is always built from what it
    declared (mutation testing switches a mutant of the declaration's parsing on inside calls only).
    """

    def __init__(self, tokenizer: str | Mapping[str, Any] = "zoo", dialect: str = "anthropic") -> None:
        from ctxmodel.targets.handshake import parse_description
        from ctxmodel.tokens.counter import counter_spec

        self.tokenizer = tokenizer
        self.dialect = dialect
        reply = describe({}, dialect=dialect)
        declared = parse_description(reply, "reference")
        self.description = attrs.evolve(declared, tokenizer=counter_spec(tokenizer).name)

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        if op == "describe":
            return describe(params, self._counter(), dialect=self.dialect)
        fn = _DIALECT_OPS[self.dialect].get(op)
        if fn is None:
            raise TargetFailure("error-reply", f"the reference has no op {op!r}")
        try:
            return fn(params, self._counter())
        except TargetFailure:
            raise
        except CtxmodelError as exc:
            raise TargetFailure("error-reply", str(exc)) from None
        except Exception as exc:  # a bug in the reference is still reported as a failure of this input
            raise TargetFailure("exception", describe_exception(exc)) from None

    def _counter(self) -> str:
        from ctxmodel.tokens.counter import counter_spec

        return "zoo" if self.tokenizer == "zoo" else counter_spec(self.tokenizer).name

    def close(self) -> None:
        pass

