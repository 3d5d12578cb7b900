"""The Chat Completions <-> Responses items conversion and the session calls (see target.py).

The kit is imported first, so that what the SDK prints while it loads goes to stderr.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Any

import ctxmodel_target  # noqa: F401  (first: it takes stdout before the library loads)
from agents import Agent, ModelResponse, RunConfig, Runner, SessionSettings, SQLiteSession, Usage, set_tracing_disabled
from agents.models.interface import Model
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

Msg = dict[str, Any]
Item = dict[str, Any]
Params = dict[str, Any]

#: The key each item carries back: [the message's index, the item's index within the message].
#: A session stores items as JSON, so an item read back is a new object: the tag is the side
#: table's key, and no code of the SDK reads it.
TAG = "x_ctxmodel"

set_tracing_disabled(True)


def _parts(content: list[Any], text_type: str) -> list[Any]:
    out: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            out.append({"type": text_type, "text": part.get("text")})
        elif isinstance(part, dict) and part.get("type") == "image_url":
            image = part.get("image_url") or {}
            out.append({"type": "input_image", "image_url": image.get("url"), "detail": image.get("detail", "auto")})
        else:  # a part Responses has no type for travels as it is (the session stores JSON)
            out.append(copy.deepcopy(part))
    return out


def to_items(message: Msg) -> list[Item]:
    """One Chat Completions message as the Responses items an agent's session holds for it."""
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        output = _parts(content, "input_text") if isinstance(content, list) else content
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": output}]
    if role not in ("system", "developer", "user", "assistant"):
        raise ValueError(f"role {role!r} is not a Chat Completions role")
    calls = message.get("tool_calls") or []
    items: list[Item] = []
    if content not in (None, "") or not calls:
        text_type = "output_text" if role == "assistant" else "input_text"
        body = _parts(content, text_type) if isinstance(content, list) else content
        items.append({"type": "message", "role": role, "content": body})
    for call in calls:
        function = call.get("function") or {}
        items.append({"type": "function_call", "call_id": call.get("id"), "name": function.get("name"),
                      "arguments": function.get("arguments")})
    return items


def _from_untagged(item: Item) -> Msg:
    """An item the SDK made itself, read as the Chat Completions message it stands for."""
    kind = item.get("type", "message")
    if kind == "function_call":
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": item.get("call_id"), "type": "function",
             "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]}
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
    return {"role": item.get("role"), "content": item.get("content")}


def _core(message: Msg) -> Msg:
    """What the session's pairing reads of a message: its role, its calls, the call it answers."""
    return {"role": message.get("role"), "calls": [c.get("id") for c in message.get("tool_calls") or []],
            "answers": message.get("tool_call_id")}


class Converted:
    """The items of a history, each tagged with where it came from, and the way back to the dicts."""

    def __init__(self, messages: Sequence[Msg]) -> None:
        self.messages = list(messages)
        self.items: list[Item] = []
        self.sizes: list[int] = []
        for index, message in enumerate(messages):
            items = to_items(message)
            self.sizes.append(len(items))
            self.items.extend({**item, TAG: [index, k]} for k, item in enumerate(items))
            if _core(self._partial(index, list(range(len(items))), items)) != _core(message):
                raise ValueError(f"the conversion lost what the session reads of messages.{index}")

    def _partial(self, index: int, kept: list[int], items: Sequence[Item]) -> Msg:
        """Message ``index`` as the items ``kept`` of it (by item index) make it: the original with the
        calls that were not kept left out, its content left out when its message item was."""
        original = self.messages[index]
        if kept == list(range(self.sizes[index])):
            return original
        out = dict(original)
        call_ids = {it.get("call_id") for it in items if it.get("type") == "function_call"}
        calls = [c for c in original.get("tool_calls") or [] if c.get("id") in call_ids]
        if "tool_calls" in original:
            if calls:
                out["tool_calls"] = calls
            else:
                del out["tool_calls"]
        had_text = original.get("content") not in (None, "")  # an empty text makes no message item
        if had_text and not any(it.get("type") == "message" for it in items):
            out["content"] = None
        return out

    def back(self, items: Sequence[Any]) -> list[Msg]:
        """The messages the items stand for, in their order: a message whose items all came back in
        order is its original dict; a run of some of them is that message less what was dropped."""
        out: list[Msg] = []
        run: list[Item] = []

        def flush() -> None:
            if run:
                index = run[0][TAG][0]
                kept = [it[TAG][1] for it in run]
                out.append(self._partial(index, kept, run))
                run.clear()

        for item in items:
            tag = item.get(TAG) if isinstance(item, dict) else None
            if not (isinstance(tag, list) and len(tag) == 2 and 0 <= tag[0] < len(self.messages)):
                flush()
                out.append(_from_untagged(item if isinstance(item, dict) else {"content": repr(item)}))
                continue
            if run and (tag[0] != run[-1][TAG][0] or tag[1] <= run[-1][TAG][1]):
                flush()
            run.append(item)
        flush()
        return out


async def _session(converted: Converted, settings: SessionSettings | None) -> SQLiteSession:
    session = SQLiteSession("ctxmodel", session_settings=settings)
    await session.add_items(copy.deepcopy(converted.items))
    return session


async def get_items(messages: Sequence[Msg], limit: int | None) -> list[Msg]:
    converted = Converted(messages)
    session = await _session(converted, None)
    try:
        return converted.back(await session.get_items(limit=limit))
    finally:
        session.close()


class _Recorder(Model):
    """A model that records the input the runner sends it and answers with one text."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        text = ResponseOutputText(type="output_text", text="ok", annotations=[])
        reply = ResponseOutputMessage(id="msg_ctxmodel", type="message", role="assistant", status="completed",
                                      content=[text])
        return ModelResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the adapter runs without streaming")


def _last_user(messages: Sequence[Msg]) -> int:
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return users[-1] if users else len(messages)


async def runner_input(messages: Sequence[Msg], limit: int) -> list[Msg]:
    """What ``Runner.run`` sends the model for the turn that opens at the last user message, the turns
    before it being the items of a session whose settings limit it (a history with no user message
    is all session)."""
    converted = Converted(messages)
    start = sum(converted.sizes[: _last_user(messages)])
    session = SQLiteSession("ctxmodel", session_settings=SessionSettings(limit=limit))
    await session.add_items(copy.deepcopy(converted.items[:start]))
    model = _Recorder()
    try:
        await Runner.run(Agent(name="ctxmodel", model=model), input=copy.deepcopy(converted.items[start:]),
                         session=session, run_config=RunConfig(tracing_disabled=True))
    finally:
        session.close()
    sent = model.inputs[0]
    return converted.back([sent] if isinstance(sent, str) else sent)


def trim_op(how: str, limit: int) -> Any:
    call = {"get-items": get_items, "runner": runner_input}[how]

    def trim(params: Params) -> Params:
        return {"messages": asyncio.run(call(params["messages"], limit))}

    return trim


def roundtrip(params: Params) -> Params:
    """Into a session and out of it again, with no limit: the storage's JSON leg included."""
    return {"messages": asyncio.run(get_items(params["messages"], None))}


# -- Responses items as they are: the openai-responses dialect (contract §7) ---------------------
#
# A session holds Responses items, so in this dialect nothing is converted: the items the gate draws
# go into the session as they are, and what comes back (or what the runner sends the model) is
# returned as it is.


def _last_user_item(items: Sequence[Item]) -> int:
    users = [i for i, it in enumerate(items)
             if it.get("type", "message") == "message" and it.get("role") == "user"]
    return users[-1] if users else len(items)


async def get_items_native(items: Sequence[Item], limit: int | None) -> list[Item]:
    session = SQLiteSession("ctxmodel")
    await session.add_items(copy.deepcopy(list(items)))
    try:
        return list(await session.get_items(limit=limit))
    finally:
        session.close()


async def runner_input_native(items: Sequence[Item], limit: int) -> list[Item]:
    """What ``Runner.run`` sends the model for the turn that opens at the last user message, the items
    before it being a session's with ``SessionSettings(limit=limit)``."""
    start = _last_user_item(items)
    session = SQLiteSession("ctxmodel", session_settings=SessionSettings(limit=limit))
    await session.add_items(copy.deepcopy(list(items[:start])))
    model = _Recorder()
    try:
        await Runner.run(Agent(name="ctxmodel", model=model), input=copy.deepcopy(list(items[start:])),
                         session=session, run_config=RunConfig(tracing_disabled=True))
    finally:
        session.close()
    sent = model.inputs[0]
    return [{"type": "message", "role": "user", "content": sent}] if isinstance(sent, str) else list(sent)


def trim_items_op(how: str, limit: int) -> Any:
    call = {"get-items": get_items_native, "runner": runner_input_native}[how]

    def trim(params: Params) -> Params:
        return {"messages": asyncio.run(call(params["messages"], limit))}

    return trim


def roundtrip_items(params: Params) -> Params:
    """Items into a session and out again, with no limit."""
    return {"messages": asyncio.run(get_items_native(params["messages"], None))}
