"""Chat Completions histories (domain §5.5), drawn with the shapes this dialect's users send.

An agent on the Chat Completions API keeps its instructions in ``system`` and ``developer`` messages
(first, and again mid-conversation when it changes mode), sends user content as a string or as a
list of parts (text, images), and runs long agentic turns: an assistant message with one or several
parallel ``tool_calls`` (content null, empty or a sentence), their ``tool`` answers in any order, the
next step. The arguments are JSON strings, some large (a file written back), the answers strings or
text parts, empty ones included. The last call of a history may still be in flight (its answers
not yet there). Messages carry keys of their own (``name``, ``refusal``, tracing metadata). Many
assistant messages carry the reasoning a model produced before them as ``reasoning_content`` (a
string, ``""`` where a client kept none: DeepSeek, Qwen, vLLM, domain §5.8): in most histories that
hold it, on the messages with calls and now and then on an answer; in some, on every assistant
message (DeepSeek's thinking mode sends it on each). A few
histories hold what a buggy agent stores (a call left unanswered, a ``tool`` message answering no
call, an answer given twice), so "no new violation" is judged on refused inputs too.

Each draw is one history (a list of message dicts, strict JSON), small by default and shrinking
toward one user message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from ctxmodel.strategies.blocks import tool_names
from ctxmodel.strategies.text import chance, pick, texts

__all__ = ["REASONING_MODES", "chat_histories"]

Msg = dict[str, Any]

_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@st.composite
def _call_id(draw: st.DrawFn, used: set[str]) -> str:
    suffix = draw(st.text(_ID_ALPHABET, min_size=1, max_size=24))
    tool_id = "call_" + suffix
    n = 0
    while tool_id in used:
        n += 1
        tool_id = f"call_{suffix}{n}"
    used.add(tool_id)
    return tool_id


@st.composite
def _arguments(draw: st.DrawFn) -> str:
    """A JSON string, as the API returns it; a large one now and then (a file written in a call)."""
    args: dict[str, Any] = {"path": draw(texts(max_size=30))}
    if draw(chance(20)):
        args["content"] = draw(texts(min_size=300, max_size=2500, kinds=("prose", "code")))
    if draw(chance(30)):
        args["recursive"] = draw(st.booleans())
    if draw(chance(10)):
        return ""  # a call streamed with no arguments
    return json.dumps(args, ensure_ascii=False, separators=None if draw(st.booleans()) else (",", ":"))


@st.composite
def _parts(draw: st.DrawFn, images: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "text", "text": draw(texts(nonblank=True))}]
    for _ in range(draw(st.integers(0, 2))):
        if images and draw(chance(30)):
            url = draw(pick(("https://example.com/shot.png", "data:image/png;base64,iVBORw0KGgo" + "A" * 40)))
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append({"type": "text", "text": draw(texts(max_size=200))})
    return out


def _extras(draw: st.DrawFn, percent: int, pool: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    if not draw(chance(percent)):
        return {}
    key, value = draw(pick(pool))
    return {key: value}


_USER_KEYS = (("name", "alice"), ("x_meta", {"ts": 1700000000, "source": "cli"}))
_ASSISTANT_KEYS = (("refusal", None), ("audio", None), ("x_meta", {"model": "gpt-4o", "latency_ms": 812}))
_TOOL_KEYS = (("name", "read_file"), ("x_meta", {"exit": 0}))


#: How a history carries reasoning (domain §5.8), shrinking toward none: not at all, on the
#: messages with calls (now and then an answer), on every assistant message (thinking mode).
REASONING_MODES: tuple[str, ...] = ("none", "none", "calls", "calls", "every")


@st.composite
def _reasoning(draw: st.DrawFn, mode: str, calls: bool) -> dict[str, Any]:
    """A ``reasoning_content`` key for an assistant message, or none. Long ones are common: a
    model reasons at length before a call, and a trimmer that cuts long strings cuts these."""
    wanted = mode == "every" or (mode == "calls" and draw(chance(85 if calls else 15)))
    if not wanted:
        return {}
    if draw(chance(10)):
        return {"reasoning_content": ""}
    if draw(chance(25)):
        return {"reasoning_content": draw(texts(min_size=200, max_size=1500, kinds=("prose",)))}
    return {"reasoning_content": draw(texts(nonblank=True, max_size=300))}


@st.composite
def _system(draw: st.DrawFn) -> Msg:
    role = draw(pick(("system", "system", "developer")))
    content: Any = draw(texts(nonblank=True, max_size=400))
    if draw(chance(20)):
        content = [{"type": "text", "text": content}]
    return {"role": role, "content": content}


@st.composite
def _user(draw: st.DrawFn, images: bool) -> Msg:
    content: Any = draw(_parts(images)) if draw(chance(35)) else draw(texts(nonblank=True, max_size=600))
    return {"role": "user", "content": content, **_extras(draw, 15, _USER_KEYS)}


@st.composite
def _step(draw: st.DrawFn, used: set[str], max_calls: int, in_flight: bool, reasoning: str = "none") -> list[Msg]:
    """One assistant message with calls and their answers (none when the call is in flight)."""
    n = draw(st.integers(1, max_calls))
    calls = [{"id": draw(_call_id(used)), "type": "function",
              "function": {"name": draw(tool_names()), "arguments": draw(_arguments())}} for _ in range(n)]
    content = draw(pick((None, None, "", "Let me look.")))
    assistant: Msg = {"role": "assistant", "content": content, **draw(_reasoning(reasoning, True)),
                      "tool_calls": calls, **_extras(draw, 15, _ASSISTANT_KEYS)}
    if in_flight:
        return [assistant]
    order = draw(st.permutations(range(n))) if n > 1 and draw(chance(30)) else list(range(n))
    answers: list[Msg] = []
    for k in order:
        body: Any = draw(st.one_of(texts(max_size=300), texts(min_size=500, max_size=2000, kinds=("prose", "code"))))
        if draw(chance(20)):
            body = [{"type": "text", "text": body}]
        answers.append({"role": "tool", "tool_call_id": calls[k]["id"], "content": body,
                        **_extras(draw, 20, _TOOL_KEYS)})
    return [assistant, *answers]


@st.composite
def _defect(draw: st.DrawFn, msgs: list[Msg], used: set[str]) -> None:
    """What a buggy agent stores: an answer lost, an answer to no call, an answer given twice."""
    tools = [i for i, m in enumerate(msgs) if m.get("role") == "tool"]
    users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
    kind = draw(pick(("lost", "orphan", "twice")))
    if kind == "lost" and tools:
        del msgs[draw(pick(tools))]
    elif kind == "twice" and tools:
        i = draw(pick(tools))
        msgs.insert(i + 1, dict(msgs[i]))
    elif users:
        i = draw(pick(users))
        msgs.insert(i + 1, {"role": "tool", "tool_call_id": draw(_call_id(used)), "content": "stale result"})


@st.composite
def chat_histories(
    draw: st.DrawFn,
    *,
    min_turns: int = 1,
    max_turns: int = 4,
    max_steps: int = 3,
    max_calls: int = 4,
    images: bool = True,
    defects: bool = True,
) -> list[Msg]:
    """A Chat Completions history: optional instructions, then turns (a user message, an agentic loop
    of steps, a closing answer), now and then a long turn, a system message mid-way, a last call in
    flight, reasoning on the assistant messages, or (``defects``) what a buggy agent stores."""
    used: set[str] = set()
    msgs: list[Msg] = []
    reasoning = draw(pick(REASONING_MODES))
    if draw(chance(70)):
        msgs.append(draw(_system()))
    n_turns = draw(st.integers(min_turns, max_turns))
    for t in range(n_turns):
        if t and draw(chance(25)):  # instructions changed mid-way (a mode switch, a new tool set)
            msgs.append(draw(_system()))
        msgs.append(draw(_user(images)))
        long_turn = draw(chance(10))
        n_steps = draw(st.integers(0, 3 * max_steps if long_turn else max_steps))
        last = t == n_turns - 1
        flight = last and draw(chance(20))
        for s in range(n_steps):
            msgs.extend(draw(_step(used, max_calls, flight and s == n_steps - 1, reasoning)))
        if not (flight and n_steps) and draw(chance(75)):
            answer: Msg = {"role": "assistant", "content": draw(texts(nonblank=True, max_size=500)),
                           **draw(_reasoning(reasoning, False)), **_extras(draw, 10, _ASSISTANT_KEYS)}
            msgs.append(answer)
    if defects and draw(chance(12)):
        draw(_defect(msgs, used))
    out: list[Msg] = copy.deepcopy(msgs)  # the pools' values are shared objects
    return out
