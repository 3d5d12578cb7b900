"""The mapping of ctxmodel's openai-chat messages onto LangChain's trimmers, and back (contract §10).

Imported by ``target.py`` once the target kit holds the protocol's stdout, so nothing LangChain
prints while it loads can reach the protocol.

The messages go in through ``convert_to_messages`` (which keeps ``tool_calls``, ``tool_call_id``,
``name``, content parts and unknown keys) and come back as the caller's own dicts: each returned
LangChain message is traced to the input message it came from, and a partial is that dict with the
partial's ``content``. Re-serialising LangChain's objects would drop what they do not model (a tool
call's ``type``, a ``null`` content) and flag the adapter's loss as the library's bug.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, convert_to_messages
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call

Msg = dict[str, Any]
Params = dict[str, Any]

TAG = "ctxmodel-input-"


def _convert_one(message: Msg) -> BaseMessage:
    """``convert_to_messages`` on one dict; where it refuses an assistant message's tool calls, the
    same message with its calls parsed as LangChain's OpenAI chat model parses a response's calls.

    ``convert_to_messages`` runs ``json.loads`` on every ``arguments`` string, so a call streamed
    with no arguments (``""``) or with arguments that are not JSON raises, while ``ChatOpenAI``
    holds such a call as ``{}`` (``parse_tool_call``) or as an invalid tool call: the history an
    application passes to these trimmers is the latter, and the trimmers are what is gated.
    """
    try:
        [converted] = convert_to_messages([message])
        return converted
    except ValueError:
        calls = message.get("tool_calls")
        if message.get("role") != "assistant" or not isinstance(calls, list):
            raise
    valid: list[dict[str, Any]] = []
    invalid: list[Any] = []
    for call in calls:
        try:
            parsed = parse_tool_call(call, return_id=True)
        except Exception as exc:  # the parser's own refusal: an invalid call, as ChatOpenAI keeps it
            invalid.append(make_invalid_tool_call(call, str(exc)))
        else:
            if parsed is not None:
                valid.append({**parsed, "type": "tool_call"})
    [converted] = convert_to_messages([{**message, "tool_calls": valid}])
    if invalid and isinstance(converted, AIMessage):
        converted = converted.model_copy(update={"invalid_tool_calls": invalid})
    return converted


def convert(messages: Sequence[Msg]) -> list[BaseMessage]:
    """The history as LangChain messages, each tagged by its input position in ``id``.

    ``id`` is what survives the deep copy ``trim_messages`` makes of a message it cuts; neither
    trimmer nor the counter reads it, and the answer is built from the input dicts, not from it.
    """
    out = []
    for index, message in enumerate(messages):
        converted = _convert_one(message)
        converted.id = f"{TAG}{index}"
        out.append(converted)
    return out


def back(result: Sequence[BaseMessage], messages: Sequence[Msg]) -> list[Msg]:
    """The caller's dicts for ``result``: the input message each came from, with a cut content."""
    out: list[Msg] = []
    for message in result:
        tag = message.id or ""
        if not tag.startswith(TAG):
            raise ValueError(f"the trimmer returned a message it was not given: {message!r}"[:300])
        original = messages[int(tag[len(TAG):])]
        content = original.get("content")
        if message.content != ("" if content is None else content):
            original = {**original, "content": message.content}
        out.append(original)
    return out


def count(params: Params) -> Params:
    return {"tokens": count_tokens_approximately(convert(params["messages"]))}


def roundtrip(params: Params) -> Params:
    return {"messages": back(convert(params["messages"]), params["messages"])}


def trimmer(**options: Any) -> Callable[[Params], Params]:
    def trim(params: Params) -> Params:
        messages = params["messages"]
        kept = trim_messages(
            convert(messages), max_tokens=params["maxTokens"], token_counter=count_tokens_approximately, **options
        )
        return {"messages": back(kept, messages)}

    return trim


def _summary(_messages: Sequence[BaseMessage]) -> str:
    return "A summary of the conversation so far."


def summarizer(keep: tuple[str, int] | None) -> Callable[[Params], Params]:
    """The middleware's ``before_model`` with ``keep`` (``None``: ``("tokens", maxTokens)``).

    It summarizes only once its ``trigger`` is met: here exactly when there is something beyond
    ``keep`` to summarize (more messages than it keeps, or more tokens than ``maxTokens``), so every
    history the gate draws past that point meets the cutoff. The summary comes from ``summarizer``
    and the model is a fake one whose name is not Anthropic's, so the middleware counts with plain
    ``count_tokens_approximately``, as ``count`` does.
    """

    def trim(params: Params) -> Params:
        messages = params["messages"]
        if keep is None:
            budget = int(params["maxTokens"])
            size: tuple[str, int] = ("tokens", budget)
            trigger: tuple[str, int] = ("tokens", budget + 1)
        else:
            size, trigger = keep, (keep[0], keep[1] + 1)
        try:
            middleware: Any = SummarizationMiddleware(
                model=FakeListChatModel(responses=["unused"]), trigger=trigger, keep=size, summarizer=_summary
            )
        except ValueError as exc:
            # Its own check of `keep` (a budget of 0 tokens keeps nothing): the middleware cannot be
            # built to answer this budget, which is the controlled error's case (contract §10.3).
            return {"error": f"SummarizationMiddleware(keep={size!r}): {exc}"}
        update = middleware.before_model({"messages": convert(messages)}, None)
        if update is None:
            return {"messages": list(messages)}
        kept = [m for m in update["messages"] if not isinstance(m, RemoveMessage)][1:]
        return {"messages": back(kept, messages)}

    return trim


def ops(family: str, options: dict[str, Any]) -> dict[str, Callable[[Params], Params]]:
    """The ops of one configuration: ``trim`` by ``family``, and the shared ``count`` and ``roundtrip``."""
    if family == "trim_messages":
        trim = trimmer(**options)
    else:
        keep = options["keep"]
        trim = summarizer(None if keep is None else (str(keep[0]), int(keep[1])))
    return {"trim": trim, "count": count, "roundtrip": roundtrip}
