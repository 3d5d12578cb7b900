# ruff: noqa: E402  (the --list answer comes before the imports: the kit takes standard output when it loads)
"""pydantic-ai's history repair (``pydantic_ai.messages.repair_messages``) as a ``normalize`` target.

Run in this directory's environment (``python examples/targets/install.py pydantic-ai``)::

    ctxmodel check --target exec:"$ENV/bin/python examples/targets/pydantic-ai/target.py CONFIG"

(``ENV`` is ``examples/targets/pydantic-ai/.venv``.)

``repair_messages`` is the public face of ``_clean_message_history``, the pass an agent runs before
every model request: it drops tool results whose call no earlier response made, gives every call
left without a result a synthesized ``ToolReturnPart`` ("The tool call was interrupted before a
result was produced."), and merges adjacent requests (results hoisted first). That is contract §3's
``normalize`` in the Anthropic dialect, whose messages its ``ModelRequest``/``ModelResponse`` parts
mirror: ``orphans=drop``; ``trailing=close`` with its default ``repair_last_response=True``, and
``trailing=leave`` with ``False`` (what the agent itself passes before a request).

``pairing-passes`` runs the first two passes of ``_clean_message_history`` alone (private functions
of the same module: ``_drop_orphaned_tool_results`` then ``_repair_dangling_tool_calls``), without
the last one, ``_merge_consecutive_messages``, which joins adjacent requests into one. Contract §3
keeps every message that had content, so a merge meets its clauses on inputs that need no pairing
repair at all; this configuration tells what the pairing repair itself does.

Conversion: each block becomes one part (a ``tool_result`` a ``ToolReturnPart``, ``is_error`` as
outcome ``failed``; a ``tool_use`` a ``ToolCallPart``; thinking a ``ThinkingPart``; text a
``TextPart`` or ``UserPromptPart``; any other block a text part standing in for it, which the repair
passes over as it passes over every part that is not a call or a result). A side table maps each part
back to the block it was made of, so a message the repair left alone comes back as the caller's dict,
and a changed one keeps its blocks and keys. The only parts without an entry are the ones the repair
synthesized. Every assistant message is a response with ``provider_name="anthropic"``: a stored
history's responses came from the API, and the library merges only responses that did not.

Hidden messages (contract §2) are no notion of pydantic-ai's: it is handed the visible messages, the
request it would build, and the hidden ones are put back in their places around its answer.
"""

from __future__ import annotations

import sys

NAMES = ("repair-messages", "repair-messages-keep-last", "pairing-passes")
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from ctxmodel_target import serve
from pydantic_ai import messages as pydantic_messages
from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)

Msg = dict[str, Any]
#: Where a part came from: (message index, block index), the block index None for string content.
Origin = tuple[int, int | None]


# -- visibility (contract §2), restated: the adapter runs without ctxmodel ------------------------


def visible(messages: list[Msg]) -> list[bool]:
    summaries = {m["condenseId"] for m in messages
                 if m.get("isSummary") is True and isinstance(m.get("condenseId"), str)}
    markers = {m["truncationId"] for m in messages
               if m.get("isTruncationMarker") is True and isinstance(m.get("truncationId"), str)}
    last = max((i for i, m in enumerate(messages) if m.get("isSummary") is True), default=-1)
    mask = []
    for i, m in enumerate(messages):
        condensed = isinstance(m.get("condenseParent"), str) and m["condenseParent"] in summaries
        truncated = isinstance(m.get("truncationParent"), str) and m["truncationParent"] in markers
        mask.append(i == last or (i > last and not condensed and not truncated))
    return mask


# -- Anthropic dicts <-> ModelMessage --------------------------------------------------------------


def _stand_in(block: Any, response: bool) -> ModelRequestPart | ModelResponsePart:
    text = block.get("text") if isinstance(block, dict) and isinstance(block.get("text"), str) else json.dumps(block)
    return TextPart(content=text) if response else UserPromptPart(content=text)


def _request_part(block: Any, names: dict[str, str]) -> ModelRequestPart:
    if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
        tool_id = block["tool_use_id"]
        return ToolReturnPart(tool_name=names.get(tool_id, ""), content=block.get("content", ""), tool_call_id=tool_id,
                              outcome="failed" if block.get("is_error") is True else "success")
    return _stand_in(block, response=False)  # type: ignore[return-value]


def _response_part(block: Any) -> ModelResponsePart:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
        return ToolCallPart(tool_name=block["name"], args=block.get("input"), tool_call_id=block["id"])
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return ThinkingPart(content=block["thinking"], signature=block.get("signature"))
    if kind == "redacted_thinking":
        return ThinkingPart(content="", id="redacted_thinking", signature=str(block.get("data")))
    return _stand_in(block, response=True)  # type: ignore[return-value]


@dataclass
class Converted:
    messages: list[ModelMessage]
    origin: dict[int, Origin]  # id(part) -> where it came from
    source: list[Msg]
    parts: dict[int, list[Any]]  # message index -> the parts made of it
    made: dict[int, int]  # id(message) -> the index of the dict it was made of

    def back(self, repaired: list[ModelMessage]) -> list[Msg]:
        return [self.message(m) for m in repaired]

    def message(self, message: ModelMessage) -> Msg:
        if id(message) in self.made:
            return self.source[self.made[id(message)]]  # left alone: the message as the caller stored it
        origins = [self.origin.get(id(p)) for p in message.parts]
        known = [o for o in origins if o is not None]
        if known and all(o is not None for o in origins) and len({o[0] for o in known}) == 1:
            index = known[0][0]
            if [id(p) for p in message.parts] == [id(p) for p in self.parts[index]]:
                return self.source[index]  # the message as the caller stored it
        base: Msg = {"role": "user" if isinstance(message, ModelRequest) else "assistant"}
        if known:
            base = {k: v for k, v in self.source[known[0][0]].items() if k != "content"}
        base["content"] = [self._block(p, o) for p, o in zip(message.parts, origins, strict=True)]
        return base

    def _block(self, part: Any, origin: Origin | None) -> Any:
        if origin is None:
            if not isinstance(part, ToolReturnPart):
                raise ValueError(f"repair_messages made a {type(part).__name__}, which no block stands for")
            block: Msg = {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.content}
            if part.outcome in ERROR_OUTCOMES:
                block["is_error"] = True
            return block
        index, at = origin
        content = self.source[index]["content"]
        return {"type": "text", "text": content} if at is None else content[at]


def to_pydantic(messages: list[Msg], indices: list[int]) -> Converted:
    converted = Converted([], {}, messages, {}, {})
    names: dict[str, str] = {}
    for index in indices:
        m = messages[index]
        content = m.get("content")
        blocks: list[tuple[int | None, Any]] = (
            [(None, content)] if isinstance(content, str) else list(enumerate(content)) if isinstance(content, list)
            else [])
        parts: list[Any] = []
        if m.get("role") == "assistant":
            for at, block in blocks:
                part = TextPart(content=block) if at is None else _response_part(block)
                if isinstance(part, ToolCallPart):
                    names[part.tool_call_id] = part.tool_name
                parts.append(part)
            message: ModelMessage = ModelResponse(parts=parts, provider_name="anthropic")
        else:
            parts = [UserPromptPart(content=b) if at is None else _request_part(b, names) for at, b in blocks]
            message = ModelRequest(parts=parts)
        converted.messages.append(message)
        converted.parts[index] = parts
        converted.made[id(message)] = index
        for at, part in zip([at for at, _ in blocks], parts, strict=True):
            converted.origin[id(part)] = (index, at)
    return converted


# -- the op ------------------------------------------------------------------------------------------


Repair = Callable[[list[ModelMessage]], list[ModelMessage]]


def _pairing_passes(messages: list[ModelMessage]) -> list[ModelMessage]:
    dropped = pydantic_messages._drop_orphaned_tool_results(messages)
    return pydantic_messages._repair_dangling_tool_calls(dropped, repair_last_response=True)


def normalize_op(repair: Repair) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def normalize(params: dict[str, Any]) -> dict[str, Any]:
        messages: list[Msg] = params["messages"]
        mask = visible(messages)
        shown = [i for i, seen in enumerate(mask) if seen]
        converted = to_pydantic(messages, shown)
        repaired = repair(converted.messages)
        return {"messages": _with_hidden(messages, mask, converted, repaired)}

    return normalize


def _with_hidden(messages: list[Msg], mask: list[bool], converted: Converted,
                 repaired: list[ModelMessage]) -> list[Msg]:
    """The repaired request, each hidden message put back before the first answer message that holds
    a part of a visible message stored after it."""
    out: list[Msg] = []
    hidden = [i for i, seen in enumerate(mask) if not seen]
    for message in repaired:
        starts = [converted.origin[id(p)][0] for p in message.parts if id(p) in converted.origin]
        if starts:
            while hidden and hidden[0] < min(starts):
                out.append(messages[hidden.pop(0)])
        out.append(converted.message(message))
    out.extend(messages[i] for i in hidden)
    return out


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    messages: list[Msg] = params["messages"]
    converted = to_pydantic(messages, list(range(len(messages))))
    return {"messages": converted.back(converted.messages)}


# Its messages carry no Roo visibility (inputs=untagged); its merge pass joins adjacent requests
# (mergeUsers=yes), which the pairing passes alone do not.
_LIBRARY = {"orphans": "drop", "resultOrder": "any", "inputs": "untagged"}
CONFIGS: dict[str, tuple[Repair, dict[str, str]]] = {
    "repair-messages": (lambda m: repair_messages(m, repair_last_response=True),
                        {**_LIBRARY, "trailing": "close", "mergeUsers": "yes"}),
    "repair-messages-keep-last": (lambda m: repair_messages(m, repair_last_response=False),
                                  {**_LIBRARY, "trailing": "leave", "mergeUsers": "yes"}),
    "pairing-passes": (_pairing_passes, {**_LIBRARY, "trailing": "close"}),
}
assert tuple(CONFIGS) == NAMES


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CONFIGS:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    repair, policies = CONFIGS[argv[0]]
    serve(
        name=f"pydantic-ai {argv[0]}",
        version=metadata.version("pydantic-ai-slim"),
        policies=policies,
        ops={"normalize": normalize_op(repair), "roundtrip": roundtrip},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
