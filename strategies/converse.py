"""Bedrock Converse histories (domain §5.10), drawn with the shapes this dialect's agents store.

Converse has Anthropic's roles and turns with blocks keyed by kind instead of typed: ``text``,
``image`` (``format`` and inline ``bytes``, or an S3 location), ``toolUse`` (``toolUseId``, ``name``,
an ``input`` object), ``toolResult`` (``content`` of ``text``, ``json`` and ``image`` items, a
``status`` of ``success`` or ``error``, often left out), ``reasoningContent`` (a ``reasoningText`` with
its ``signature``, or ``redactedContent``) before the calls it produced, and ``cachePoint`` markers an
agent puts after what it wants cached (Strands does, after the system prompt and the last user
message). Content is always a list. The system prompt is apart (``systemPrompt`` here, as in
Anthropic).

So the histories are the Anthropic trim histories (``strategies.trim``: what a correct agent
stores, a call in flight, thinking on throughout, now and then pairing defects) written in Converse,
block by block, plus what only Converse agents store: ``json`` results, error statuses,
``cachePoint`` blocks, and now and then the parallel results of one step split across two user
messages (the shape Bedrock refuses with "roles must alternate" and the field's fix joins), so that
"no new violation" is judged on refused inputs too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctxmodel.strategies.text import chance, texts

__all__ = ["converse_block", "converse_histories"]

Msg = dict[str, Any]

_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}


def _image(source: Any) -> dict[str, Any]:
    if isinstance(source, dict) and source.get("type") == "base64":
        return {"format": _FORMATS.get(str(source.get("media_type")), "png"),
                "source": {"bytes": str(source.get("data", ""))}}
    return {"format": "png", "source": {"s3Location": {"uri": "s3://agent-bucket/screenshot.png"}}}


def _result_items(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    out: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and item.get("type") == "text":
            out.append({"text": str(item.get("text", ""))})
        elif isinstance(item, dict) and item.get("type") == "image":
            out.append({"image": _image(item.get("source"))})
    return out or [{"text": ""}]


def converse_block(block: Any) -> dict[str, Any] | None:
    """One Anthropic block in Converse (domain §5.10), or None for a block Converse has no kind for."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return {"text": str(block.get("text", ""))}
    if kind == "image":
        return {"image": _image(block.get("source"))}
    if kind == "tool_use":
        arguments = block.get("input")
        return {"toolUse": {"toolUseId": str(block.get("id")), "name": str(block.get("name")),
                            "input": arguments if isinstance(arguments, dict) else {}}}
    if kind == "tool_result":
        result: dict[str, Any] = {"toolUseId": str(block.get("tool_use_id")),
                                  "content": _result_items(block.get("content"))}
        if block.get("is_error"):
            result["status"] = "error"
        return {"toolResult": result}
    if kind == "thinking":
        return {"reasoningContent": {"reasoningText": {"text": str(block.get("thinking", "")),
                                                       "signature": str(block.get("signature", ""))}}}
    if kind == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": str(block.get("data", ""))}}
    return None


def _message(message: Msg) -> Msg:
    content = message.get("content")
    blocks = [{"text": content}] if isinstance(content, str) else [
        b for b in (converse_block(b) for b in (content if isinstance(content, list) else [])) if b is not None]
    return {"role": message.get("role"), "content": blocks or [{"text": "..."}]}


@st.composite
def _touched(draw: st.DrawFn, message: Msg) -> Msg:
    """What a Converse agent adds to a message it stores: a status on a result, a ``json`` result, a
    cache point after a user message."""
    blocks: list[dict[str, Any]] = []
    for block in message["content"]:
        result = block.get("toolResult")
        if isinstance(result, dict):
            result = dict(result)
            if "status" not in result and draw(chance(40)):
                result["status"] = "success"
            if draw(chance(15)):
                result["content"] = [{"json": {"exitCode": draw(st.integers(0, 2)),
                                               "stdout": draw(texts(max_size=80))}}]
            block = {"toolResult": result}
        blocks.append(block)
    if message["role"] == "user" and draw(chance(15)):
        blocks.append({"cachePoint": {"type": "default"}})
    return {"role": message["role"], "content": blocks}


def _split_results(messages: list[Msg], k: int) -> list[Msg]:
    """The results of message ``k`` (two or more) split across two user messages."""
    blocks = messages[k]["content"]
    half = len(blocks) // 2
    return [*messages[:k], {"role": "user", "content": blocks[:half]}, {"role": "user", "content": blocks[half:]},
            *messages[k + 1:]]


@st.composite
def converse_histories(draw: st.DrawFn, anthropic_histories: st.SearchStrategy[list[Msg]]) -> list[Msg]:
    """One Converse history (module docstring) made of a draw of ``anthropic_histories`` (the trim
    strategy's, ``strategies.trim.trim_histories``), shrinking toward one user message."""
    anthropic = draw(anthropic_histories)
    messages = [draw(_touched(_message(m))) for m in anthropic]
    split = [k for k, m in enumerate(messages) if m["role"] == "user" and len(m["content"]) >= 2
             and all("toolResult" in b for b in m["content"])]
    splits = bool(split) and draw(chance(10))
    if splits:
        messages = _split_results(messages, draw(st.sampled_from(split)))
    return messages
