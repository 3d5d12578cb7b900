"""Gemini ``contents`` (domain §5.9), drawn with the shapes this dialect's agents store.

A content is ``{role: "user" | "model", parts: [..]}``: ``text`` parts, ``inlineData`` images,
``functionCall`` parts (``name``, ``args``, an ``id`` where the client sets one: ADK does,
``adk-…``), ``functionResponse`` parts (``name``, ``response``, the call's ``id``) in the user turn
right after the call turn, one per call, in call order. With thinking on (Gemini 2.5 and 3), a
model step may open with ``thought: true`` summary parts, and its first ``functionCall`` part
carries the step's ``thoughtSignature`` (Gemini 3 refuses the current turn's calls without it); an
answer's last text part may carry one too. The system instruction is apart (``systemPrompt`` here).

So the histories are the Anthropic trim histories (``strategies.trim``: what a correct agent
stores, a call in flight, thinking on throughout, now and then pairing defects) written as
contents, part by part: a thinking block becomes a thought part and its signature moves to the
step's first call part (or its last text part), a redacted one gives only the signature, a
``tool_result`` becomes a ``functionResponse`` named after its call (``response`` ``{"output": ..}``,
``{"error": ..}`` for an error). Half the histories give their calls ids, as ADK does.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from ctxmodel.strategies.text import chance

__all__ = ["gemini_histories"]

Msg = dict[str, Any]


def _signature(block: Msg) -> str:
    raw = str(block.get("signature") or block.get("data") or "sig")
    return base64.b64encode(raw.encode("utf-8")).decode("ascii")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict)) if isinstance(content, list) else ""


def _content(message: Msg, names: dict[str, str], ids: bool) -> Msg:
    given = message.get("content")
    blocks: list[Any] = [{"type": "text", "text": given}] if isinstance(given, str) else (
        given if isinstance(given, list) else [])
    parts: list[dict[str, Any]] = []
    signature: str | None = None
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking":
            parts.append({"text": str(block.get("thinking", "")), "thought": True})
            signature = signature or _signature(block)
        elif kind == "redacted_thinking":
            signature = signature or _signature(block)
        elif kind == "text":
            parts.append({"text": str(block.get("text", ""))})
        elif kind == "image" and isinstance(block.get("source"), dict) and block["source"].get("type") == "base64":
            parts.append({"inlineData": {"mimeType": str(block["source"].get("media_type", "image/png")),
                                         "data": str(block["source"].get("data", ""))}})
        elif kind == "tool_use":
            names[str(block.get("id"))] = str(block.get("name"))
            call: dict[str, Any] = {"name": str(block.get("name")),
                                    "args": block.get("input") if isinstance(block.get("input"), dict) else {}}
            if ids:
                call["id"] = str(block.get("id"))
            parts.append({"functionCall": call})
        elif kind == "tool_result":
            tool_id = str(block.get("tool_use_id"))
            key = "error" if block.get("is_error") else "output"
            response: dict[str, Any] = {"name": names.get(tool_id, "unknown_tool"),
                                        "response": {key: _text(block.get("content"))}}
            if ids:
                response["id"] = tool_id
            parts.append({"functionResponse": response})
    if signature is not None:
        calls = [p for p in parts if "functionCall" in p]
        texts = [p for p in parts if "text" in p and not p.get("thought")]
        target = calls[0] if calls else texts[-1] if texts else None
        if target is not None:
            target["thoughtSignature"] = signature
    role = "model" if message.get("role") == "assistant" else "user"
    return {"role": role, "parts": parts or [{"text": "..."}]}


@st.composite
def gemini_histories(draw: st.DrawFn, anthropic_histories: st.SearchStrategy[list[Msg]]) -> list[Msg]:
    """One Gemini history (module docstring) made of a draw of ``anthropic_histories``."""
    ids = draw(chance(50))
    names: dict[str, str] = {}
    return [_content(m, names, ids) for m in draw(anthropic_histories)]
