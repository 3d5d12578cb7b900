"""Broken ``effective``, ``request``, purity and ``count`` targets, one bug each
(``python:tests.targets.broken_ops:Class``), named after the property that must catch it
(asserted in ``tests/quality/test_witnesses.py``).
"""

from __future__ import annotations

from typing import Any

from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


class DanglingParentsHide(Reference):
    """Hides every message with a truncationParent, whether its marker exists or not (rewind never restores)."""

    name = "broken-dangling-parents-hide"

    def effective(self, params: Params) -> Params:
        out: list[Msg] = super().effective(params)["messages"]
        return {"messages": [m for m in out if not isinstance(m.get("truncationParent"), str)]}


class CleansInEffective(Reference):
    """Strips metadata in effective (role and content only): content no longer the stored messages."""

    name = "broken-cleans-in-effective"

    def effective(self, params: Params) -> Params:
        out: list[Msg] = super().effective(params)["messages"]
        return {"messages": [{"role": m["role"], "content": m["content"]} for m in out]}


class TextBeforeResults(Reference):
    """Builds its request with the user's text first, results after it (the API's 400)."""

    name = "broken-text-before-results"

    def request(self, params: Params) -> Params:
        out: list[Msg] = super().request(params)["messages"]
        for msg in out:
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, list):
                others = [b for b in content if b.get("type") != "tool_result"]
                results = [b for b in content if b.get("type") == "tool_result"]
                msg["content"] = others + results
        return {"messages": out}


def _stamp(params: Params) -> None:
    """ensureMessageIdentifiers (domain §1.1): assigns message ids in place, mutating its input."""
    for n, msg in enumerate(params.get("messages", [])):
        msg.setdefault("messageId", f"legacy:{msg.get('ts', 0)}:{n}")


class MutatesInput(Reference):
    """Every op stamps message ids into the caller's messages before doing its job."""

    name = "broken-mutates-input"

    def normalize(self, params: Params) -> Params:
        _stamp(params)
        return ref.op_normalize(params)

    def effective(self, params: Params) -> Params:
        _stamp(params)
        return ref.op_effective(params)

    def request(self, params: Params) -> Params:
        _stamp(params)
        return ref.op_request(params)

    def recover(self, params: Params) -> Params:
        _stamp(params)
        return ref.op_recover(params)

    def count(self, params: Params) -> Params:
        _stamp(params)
        return ref.op_count(params)


class RemembersToolUses(Reference):
    """Keeps state between requests: tool_use ids seen by earlier calls count as duplicates, a
    counter's cache is never keyed on the system prompt, and recovery remembers what it hid."""

    name = "broken-remembers"

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.calls = 0

    def _forget_seen(self, messages: list[Msg]) -> list[Msg]:
        out = []
        for msg in messages:
            content = msg.get("content")
            if msg.get("role") == "assistant" and isinstance(content, list):
                kept = [b for b in content if b.get("type") != "tool_use" or b.get("id") not in self.seen]
                self.seen.update(b["id"] for b in content if b.get("type") == "tool_use")
                msg = {**msg, "content": kept}
            out.append(msg)
        return out

    def normalize(self, params: Params) -> Params:
        return ref.op_normalize({**params, "messages": self._forget_seen(params["messages"])})

    def effective(self, params: Params) -> Params:
        return {"messages": self._forget_seen(ref.op_effective(params)["messages"])}

    def request(self, params: Params) -> Params:
        return ref.op_request({**params, "messages": self._forget_seen(params["messages"])})

    def recover(self, params: Params) -> Params:
        self.calls += 1
        out = ref.op_recover(params)
        out["prevContextTokens"] += self.calls
        return out

    def count(self, params: Params) -> Params:
        self.calls += 1
        out = ref.op_count(params)
        return {"tokens": out["tokens"] + self.calls % 2}


class CountsPerMessage(Reference):
    """Rounds the fudge once per message and counts the system prompt inside the same call."""

    name = "broken-counts-per-message"

    def count(self, params: Params) -> Params:
        import math

        from ctxmodel import codec
        from ctxmodel.tokens import get_counter

        counter = get_counter("zoo")
        total = 0
        for msg in codec.load(params["messages"]):
            total += math.ceil(1.5 * sum(counter.raw_block(b) for b in msg.blocks))
        return {"tokens": total + counter.count_text(params.get("systemPrompt", ""))}


class CountsImagesFlat(Reference):
    """Counts every top-level image 300 tokens, base64 ones included (contract §5: ceil(sqrt(len(data))))."""

    name = "broken-counts-images-flat"

    def count(self, params: Params) -> Params:
        from ctxmodel import codec
        from ctxmodel.model import Image
        from ctxmodel.tokens import get_counter

        counter = get_counter("zoo")
        raw = sum(300 if isinstance(b, Image) else counter.raw_block(b)
                  for msg in codec.load(params["messages"]) for b in msg.blocks)
        return {"tokens": counter.fudged(raw) + counter.count_text(params.get("systemPrompt", ""))}


class CrashesOnLongWords(Reference):
    """The WASM tiktoken of the field: gives up on a long run without whitespace (contract §5)."""

    name = "broken-crashes-on-long-words"

    def count(self, params: Params) -> Params:
        texts = [params.get("systemPrompt", "")]
        for msg in params["messages"]:
            content = msg.get("content")
            texts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        for text in texts:
            if isinstance(text, str) and len(text) > 100_000 and max(map(len, text.split()), default=0) > 100_000:
                raise RuntimeError("RangeError: Maximum call stack size exceeded")
        return ref.op_count(params)
