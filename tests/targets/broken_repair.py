"""Broken ``repair`` targets, one bug each (``python:tests.targets.broken_repair:Class``), named
after the property that must catch it (asserted in ``tests/quality/test_witnesses.py``)."""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Params, Reference


class _Repairs(Reference):
    ops: ClassVar[list[str]] = [*Reference.ops, "repair"]

    def repair(self, params: Params) -> Params:
        return ref.op_repair(params)


class RepairsNothing(_Repairs):
    """Writes the file back as it was: the 400 stays."""

    name = "broken-repairs-nothing"

    def repair(self, params: Params) -> Params:
        return {"messages": params["messages"]}


class WritesTheRequest(_Repairs):
    """Writes the request (the effective history, normalized) as the stored file: every condensed
    or truncated message is lost (what ``ctxmodel normalize`` once wrote)."""

    name = "broken-writes-the-request"

    def repair(self, params: Params) -> Params:
        return ref.op_request(params)


class RelabelsInOrder(_Repairs):
    """Repairs, then gives each message's results the ids of the calls before it in order: a valid
    result can land on another call."""

    name = "broken-relabels-in-order"

    def repair(self, params: Params) -> Params:
        out: list[dict[str, Any]] = ref.op_repair(params)["messages"]
        for k in range(1, len(out)):
            prev, msg = out[k - 1], out[k]
            uses = [b["id"] for b in prev.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
            content = msg.get("content")
            if prev.get("role") != "assistant" or len(uses) < 2 or not isinstance(content, list):
                continue
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            for block, tool_id in zip(results, reversed(uses), strict=False):
                block["tool_use_id"] = tool_id
        return {"messages": out}


class NotIdempotent(_Repairs):
    """Adds a note to the first message on every call."""

    name = "broken-repair-not-idempotent"

    def repair(self, params: Params) -> Params:
        out: list[dict[str, Any]] = ref.op_repair(params)["messages"]
        if out:
            first = dict(out[0])
            content = first.get("content")
            note = {"type": "text", "text": "(repaired)"}
            first["content"] = [*(content if isinstance(content, list) else [{"type": "text", "text": content}]), note]
            out[0] = first
        return {"messages": out}


class MutatesInput(_Repairs):
    """Stamps message ids into the caller's messages before repairing (ensureMessageIdentifiers,
    domain §1.1, done in place)."""

    name = "broken-repair-mutates-input"

    def repair(self, params: Params) -> Params:
        for n, msg in enumerate(params.get("messages", [])):
            msg.setdefault("messageId", f"legacy:{msg.get('ts', 0)}:{n}")
        return ref.op_repair(params)


class RemembersRepairs(_Repairs):
    """Keeps state between requests: a tool_use id an earlier call saw counts as a duplicate, so the
    same file repaired twice loses its calls the second time."""

    name = "broken-repair-remembers"

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def repair(self, params: Params) -> Params:
        out: list[dict[str, Any]] = []
        for msg in ref.op_repair(params)["messages"]:
            content = msg.get("content")
            if msg.get("role") == "assistant" and isinstance(content, list):
                uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
                kept = [b for b in content if b not in uses or b.get("id") not in self.seen]
                self.seen.update(str(b.get("id")) for b in uses)
                msg = {**msg, "content": kept}
            out.append(msg)
        return {"messages": out}
