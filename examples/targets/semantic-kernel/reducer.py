"""The Chat Completions <-> Semantic Kernel conversion and the reducer call (see target.py).

The kit is imported first, so that what Semantic Kernel prints while it loads goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import ctxmodel_target  # noqa: F401  (first: it takes stdout before the library loads)
from semantic_kernel.contents import (
    ChatHistoryTruncationReducer,
    ChatMessageContent,
    FunctionCallContent,
    FunctionResultContent,
    ImageContent,
    TextContent,
)
from semantic_kernel.contents.utils.author_role import AuthorRole

Msg = dict[str, Any]
Params = dict[str, Any]

ROLES = {
    "system": AuthorRole.SYSTEM,
    "developer": AuthorRole.DEVELOPER,
    "user": AuthorRole.USER,
    "assistant": AuthorRole.ASSISTANT,
    "tool": AuthorRole.TOOL,
}
ROLE_NAMES = {role: name for name, role in ROLES.items()}


def _text_items(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextContent(text=content)]
    if not isinstance(content, list):
        raise ValueError(f"content is neither a string, null nor a list of parts: {content!r}"[:200])
    items: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            items.append(TextContent(text=part["text"]))
        elif isinstance(part, dict) and part.get("type") == "image_url":
            items.append(ImageContent(uri=part["image_url"]["url"]))
        else:  # a part the connector has no item for; the reducer reads no text, so a text stands in
            items.append(TextContent(text=json.dumps(part)))
    return items


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def to_sk(message: Msg) -> ChatMessageContent:
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not a Chat Completions role")
    name = message.get("name") if isinstance(message.get("name"), str) else None
    if role == "tool":
        result = FunctionResultContent(id=message.get("tool_call_id"), result=_result_text(message.get("content")))
        return ChatMessageContent(role=AuthorRole.TOOL, items=[result], name=name)
    items = _text_items(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        items.append(FunctionCallContent(id=call.get("id"), name=function.get("name"),
                                         arguments=function.get("arguments")))
    return ChatMessageContent(role=ROLES[role], items=items, name=name)


def from_sk(message: ChatMessageContent) -> Msg:
    """A message the reducer made itself, read back from its items."""
    out: Msg = {"role": ROLE_NAMES[message.role]}
    calls = [i for i in message.items if isinstance(i, FunctionCallContent)]
    results = [i for i in message.items if isinstance(i, FunctionResultContent)]
    texts = [i.text for i in message.items if isinstance(i, TextContent)]
    if results:
        out.update(role="tool", tool_call_id=results[0].id, content=str(results[0].result))
        return out
    out["content"] = "".join(t or "" for t in texts) if texts else None
    if calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in calls]
    return out


def _core(message: Msg) -> Msg:
    """What the reducer can see of a message: its role and its calls' and results' ids."""
    return {
        "role": message.get("role"),
        "calls": [c.get("id") for c in message.get("tool_calls") or []],
        "result": message.get("tool_call_id"),
    }


class Converted:
    """The reducer's messages and the side table from each object back to the dict it came from."""

    def __init__(self, messages: Sequence[Msg]) -> None:
        self.objects = [to_sk(m) for m in messages]
        self.origin = {id(obj): m for obj, m in zip(self.objects, messages, strict=True)}
        for obj, m in zip(self.objects, messages, strict=True):
            if _core(from_sk(obj)) != _core(m):
                raise ValueError(f"the conversion lost what the reducer reads: {_core(m)} came back as "
                                 f"{_core(from_sk(obj))}")

    def back(self, chosen: Sequence[ChatMessageContent]) -> list[Msg]:
        return [self.origin[id(obj)] if id(obj) in self.origin else from_sk(obj) for obj in chosen]


async def _reduce(messages: Sequence[Msg], kwargs: dict[str, Any], one_at_a_time: bool) -> list[Msg]:
    converted = Converted(messages)
    if one_at_a_time:
        reducer = ChatHistoryTruncationReducer(**kwargs)
        for obj in converted.objects:
            await reducer.add_message_async(obj)
    else:
        reducer = ChatHistoryTruncationReducer(messages=list(converted.objects), **kwargs)
        await reducer.reduce()
    return converted.back(reducer.messages)


def trim_op(kwargs: dict[str, Any], one_at_a_time: bool) -> Any:
    def trim(params: Params) -> Params:
        return {"messages": asyncio.run(_reduce(params["messages"], kwargs, one_at_a_time))}

    return trim


def roundtrip(params: Params) -> Params:
    converted = Converted(params["messages"])
    return {"messages": converted.back(converted.objects)}


