"""LlamaIndex's chat memories as ctxmodel ``trim`` targets (contract §10), in their own environment.

    python examples/targets/install.py llamaindex
    ctxmodel check --timeout 30 --target exec:"examples/targets/llamaindex/.venv/bin/python \\
        examples/targets/llamaindex/target.py chat_memory_buffer"

``python target.py --list`` prints the configurations, one per memory class of
``llama_index.core.memory``, each with ``maxTokens`` as its ``token_limit``:

- ``chat_memory_buffer``: ``ChatMemoryBuffer.from_defaults(token_limit=..., chat_history=...)``, then
  ``.get()``. Its ``count`` is the buffer's own measure, ``_token_count_for_messages``: the default
  tokenizer (``get_tokenizer()``: tiktoken's encoding for ``gpt-3.5-turbo``, ``cl100k_base``, special
  tokens allowed) over ``str(m.content)`` of the messages joined by spaces (a message with no text
  is the string ``"None"``; tool calls and ids are not text, so they count nothing).
- ``memory``: ``Memory.from_defaults(token_limit=...)``, the history put with ``put_messages`` (as an
  agent hands over a finished step: it trims its queue when it is over ``token_limit`` times
  ``chat_history_token_ratio``, 0.7 by default), then ``.get()``. Its ``count`` is the sum of
  ``_estimate_token_count`` over the messages, the figure the memory trims by: the same tokenizer
  over each text block, 256 per image, and ``str(additional_kwargs)`` (so tool calls and ids count
  as their Python repr).

A limit below 1 is refused by both classes (``ValueError``, "Token limit must be set and greater
than 0"): that refusal is answered as the controlled error, the library saying no answer is possible.

Messages are converted as LlamaIndex's OpenAI integration does (``from_openai_message_dict``): the
role, the content as blocks (a string one text block, a list's ``text`` parts text blocks and its
``image_url`` parts image blocks), and every other key (``tool_calls``, ``tool_call_id``, ``name``,
unknown keys) in ``additional_kwargs``. The way back matches each returned ``ChatMessage`` to the
input message it was made from (by its JSON dump, newest first, in order) and answers with that
input's dict, so what comes back is the caller's message, every key intact; a message the library
made itself is converted back as the integration's ``to_openai_message_dict`` would.

Declared from the source: ``trimSystem=any`` (neither class sets system messages apart: they are
dropped with the oldest; an agent passes its system prompt separately), ``trimLastUser=any`` (both
keep the newest messages, whatever their role), ``trimPartial=no`` (no message is ever cut),
``trimBudget=tokens``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

CONFIGURATIONS = ("chat_memory_buffer", "memory")
POLICIES = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no", "trimBudget": "tokens"}
#: The text of the classes' validator for a limit below 1 (``validate_memory``).
LIMIT_REFUSED = "Token limit must be set and greater than 0"


def to_chat_message(message: dict[str, Any]) -> Any:
    from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock

    content = message.get("content")
    extra = {key: value for key, value in message.items() if key not in ("role", "content")}
    if isinstance(content, list):
        blocks: list[Any] = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                blocks.append(TextBlock(text=part["text"]))
            elif kind == "image_url":
                image = part["image_url"]
                blocks.append(ImageBlock(url=image["url"], detail=image.get("detail")))
            else:  # as the integration does: it has no block for any other part
                raise ValueError(f"Unsupported message type: {kind}")
        return ChatMessage(role=message["role"], blocks=blocks, additional_kwargs=extra)
    return ChatMessage(role=message["role"], content=content, additional_kwargs=extra)


def to_openai_dict(message: Any) -> dict[str, Any]:
    """A message the library made: ``to_openai_message_dict``'s shape (role, text content, the kwargs)."""
    out: dict[str, Any] = {"role": message.role.value, "content": message.content}
    out.update(message.additional_kwargs)
    return out


def _fingerprint(message: Any) -> str:
    return json.dumps(message.model_dump(mode="json"), sort_keys=True)


def back(answer: list[Any], converted: list[Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each returned message as the input dict it came from, matched newest first and in order."""
    prints = [_fingerprint(m) for m in converted]
    out: list[dict[str, Any]] = []
    end = len(messages)
    for message in reversed(answer):
        mine = _fingerprint(message)
        for index in range(end - 1, -1, -1):
            if prints[index] == mine:
                out.append(messages[index])
                end = index
                break
        else:
            out.append(to_openai_dict(message))
    return out[::-1]


def _buffer(limit: int | None, history: list[Any] | None = None) -> Any:
    from llama_index.core.memory import ChatMemoryBuffer

    return ChatMemoryBuffer.from_defaults(token_limit=limit, chat_history=history)


class MemoryConfiguration:
    """``Memory`` over one in-memory chat store, each request in a session of its own, reset after."""

    def __init__(self) -> None:
        from llama_index.core.memory import Memory

        self.counter = Memory.from_defaults(token_limit=1)
        self.store = self.counter.sql_store
        self.requests = 0

    def run(self, limit: int | None, history: list[Any], put: bool) -> list[Any]:
        from llama_index.core.memory import Memory

        self.requests += 1
        options: dict[str, Any] = {} if limit is None else {"token_limit": limit}
        memory = Memory.from_defaults(session_id=f"request-{self.requests}", chat_store=self.store, **options)
        try:
            if put:
                memory.put_messages(history)
            else:
                memory.set(history)
            return list(memory.get())
        finally:
            memory.reset()

    def count(self, history: list[Any]) -> int:
        return sum(self.counter._estimate_token_count(m) for m in history)


def _refused(exc: Exception, limit: Any) -> dict[str, Any] | None:
    """The controlled error for the classes' refusal of a limit below 1; None for any other error."""
    return {"error": f"token_limit={limit}: {LIMIT_REFUSED}"} if LIMIT_REFUSED in str(exc) else None


def ops_for(configuration: str) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    if configuration == "chat_memory_buffer":
        counter = _buffer(1)

        def trim_buffer(params: dict[str, Any]) -> dict[str, Any]:
            messages = params["messages"]
            converted = [to_chat_message(m) for m in messages]
            try:
                buffer = _buffer(params.get("maxTokens"), list(converted))
            except ValueError as exc:
                if (refused := _refused(exc, params.get("maxTokens"))) is None:
                    raise
                return refused
            return {"messages": back(list(buffer.get()), converted, messages)}

        def count_buffer(params: dict[str, Any]) -> dict[str, Any]:
            return {"tokens": counter._token_count_for_messages([to_chat_message(m) for m in params["messages"]])}

        def roundtrip_buffer(params: dict[str, Any]) -> dict[str, Any]:
            messages = params["messages"]
            converted = [to_chat_message(m) for m in messages]
            return {"messages": back(list(_buffer(None, list(converted)).get_all()), converted, messages)}

        return {"trim": trim_buffer, "count": count_buffer, "roundtrip": roundtrip_buffer}

    memory = MemoryConfiguration()

    def trim_memory(params: dict[str, Any]) -> dict[str, Any]:
        messages = params["messages"]
        converted = [to_chat_message(m) for m in messages]
        try:
            answer = memory.run(params.get("maxTokens"), list(converted), put=True)
        except ValueError as exc:
            if (refused := _refused(exc, params.get("maxTokens"))) is None:
                raise
            return refused
        return {"messages": back(answer, converted, messages)}

    def count_memory(params: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": memory.count([to_chat_message(m) for m in params["messages"]])}

    def roundtrip_memory(params: dict[str, Any]) -> dict[str, Any]:
        messages = params["messages"]
        converted = [to_chat_message(m) for m in messages]
        return {"messages": back(memory.run(None, list(converted), put=False), converted, messages)}

    return {"trim": trim_memory, "count": count_memory, "roundtrip": roundtrip_memory}


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(CONFIGURATIONS))
        return 0
    if len(argv) != 1 or argv[0] not in CONFIGURATIONS:
        print(f"usage: target.py --list | {' | '.join(CONFIGURATIONS)}", file=sys.stderr)
        return 2
    from importlib.metadata import version

    from ctxmodel_target import serve  # before the library: the kit takes stdout, so nothing it prints can reach it

    ops = ops_for(argv[0])
    name = "ChatMemoryBuffer" if argv[0] == "chat_memory_buffer" else "Memory"
    serve(
        name=f"llama-index-core {name}",
        version=version("llama-index-core"),
        dialect="openai-chat",
        tokenizer={"encoding": "cl100k_base", "fudge": 1},
        policies=POLICIES,
        ops=ops,
        describe={"ops": ["count", "trim"]},  # roundtrip is the adapter's own, for its test only
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
