"""Broken ``normalize`` targets, one bug each (``python:tests.targets.broken_normalize:Class``).

Each is the reference with one thing broken, named after the property that must catch it
(asserted in ``tests/quality/test_witnesses.py``). Most bugs are ones the field has shipped (domain §4).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.normalize import SYNTHETIC_TEXT
from ctxmodel.properties.json_reading import use_ids
from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def _results_first(msg: Msg) -> int:
    """How many leading blocks of a user message are tool results."""
    content = msg.get("content")
    n = 0
    for block in content if isinstance(content, list) else []:
        if block.get("type") != "tool_result":
            break
        n += 1
    return n


def _each_result_message(out: list[Msg]) -> list[tuple[int, Msg]]:
    return [(k, m) for k, m in enumerate(out) if m.get("role") == "user" and _results_first(m)]


class ResultsSplit(Reference):
    """Results split by an image (Zoo-Code #1774): the first other block lands before the last result."""

    name = "broken-results-split"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            n = _results_first(msg)
            if len(msg["content"]) > n:
                other = msg["content"].pop(n)
                msg["content"].insert(n - 1, other)
        return {"messages": out}


class LeavesLateDuplicate(Reference):
    """A repeated result after the user's text is left where it stood (QwenLM/qwen-code PR #8163 shape):
    the leading run is right, but a tool_result follows a non-result block."""

    name = "broken-leaves-late-duplicate"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            n = _results_first(msg)
            if len(msg["content"]) > n:
                msg["content"].append(dict(msg["content"][n - 1]))
        return {"messages": out}


class ResultOrderReversed(Reference):
    """Declares resultOrder=tool_use but sends results in reverse order."""

    name = "broken-result-order"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            n = _results_first(msg)
            msg["content"][:n] = list(reversed(msg["content"][:n]))
        return {"messages": out}


class EditsValidResult(Reference):
    """Rewrites a kept result's content (a "cleanup" pass that trims it)."""

    name = "broken-edits-valid-result"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            for block in msg["content"][: _results_first(msg)]:
                if block.get("content") != SYNTHETIC_TEXT:
                    block["content"] = "[result elided]"
        return {"messages": out}


class PositionalRemap(Reference):
    """Results moved to the wrong call: ids reassigned by position, rotated (domain §4.1 Roo remap gone wrong)."""

    name = "broken-positional-remap"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "resultOrder": "any"}

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            lead = msg["content"][: _results_first(msg)]
            ids = [b["tool_use_id"] for b in lead]
            for block, new_id in zip(lead, ids[1:] + ids[:1], strict=True):
                block["tool_use_id"] = new_id
        return {"messages": out}


class UnmarkedSynthetic(Reference):
    """Synthetic results that read like success: no is_error, no "interrupt"."""

    name = "broken-unmarked-synthetic"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            for block in msg["content"]:
                if block.get("content") == SYNTHETIC_TEXT and block.get("is_error") is True:
                    block["content"] = "done"
                    del block["is_error"]
        return {"messages": out}


class SynthesizesOverValid(Reference):
    """Replaces the first result of every turn with a synthetic one, valid or not."""

    name = "broken-synthesizes-over-valid"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        for _, msg in _each_result_message(out):
            first = msg["content"][0]
            first["content"] = SYNTHETIC_TEXT
            first["is_error"] = True
        return {"messages": out}


class DropsDeclaredToText(Reference):
    """Declares orphans=to_text but drops them."""

    name = "broken-drops-declared-to-text"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "orphans": "to_text"}

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "policies": {**params.get("policies", {}), "orphans": "drop"}})


def _rename_later_duplicates(history: list[Msg]) -> tuple[list[Msg], dict[str, str]]:
    """Give repeated tool_use ids (and the results after them) a private name, so that the
    reference's rule-5 pass never sees them."""
    seen: set[str] = set()
    renamed: dict[str, str] = {}
    out: list[Msg] = []
    pending: dict[str, str] = {}
    for msg in history:
        msg = dict(msg)
        content = msg.get("content")
        if msg.get("role") == "user" and isinstance(content, list) and pending:
            msg["content"] = [
                {**b, "tool_use_id": pending[b["tool_use_id"]]}
                if b.get("type") == "tool_result" and b.get("tool_use_id") in pending
                else b
                for b in content
            ]
        pending = {}
        if msg.get("role") == "assistant" and isinstance(content, list):
            blocks = []
            for b in content:
                if b.get("type") == "tool_use":
                    if b["id"] in seen and b["id"] not in pending:
                        alias = f"{b['id']}__dup{len(renamed)}"
                        renamed[alias] = b["id"]
                        pending[b["id"]] = alias
                        b = {**b, "id": alias}
                    seen.add(b["id"])
                blocks.append(b)
            msg["content"] = blocks
        out.append(msg)
    return out, renamed


def _restore(value: Any, renamed: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            k: (renamed.get(v, v) if k in ("id", "tool_use_id") else _restore(v, renamed)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_restore(v, renamed) for v in value]
    return value


class KeepsDuplicateToolUses(Reference):
    """Never removes a repeated tool_use id (the API answers "tool_use ids must be unique")."""

    name = "broken-keeps-duplicate-tool-uses"

    def normalize(self, params: Params) -> Params:
        history, renamed = _rename_later_duplicates(params["messages"])
        out = super().normalize({**params, "messages": history})["messages"]
        return {"messages": _restore(out, renamed)}


class StripsMetadata(Reference):
    """Keeps role and content only (buildCleanConversationHistory applied inside normalize)."""

    name = "broken-strips-metadata"

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        return {"messages": [{"role": m["role"], "content": m["content"]} for m in out]}


def _as_blocks(msg: Msg) -> list[Any]:
    content = msg.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


class MergesKeepingTheLastKeys(Reference):
    """Declares ``mergeUsers=yes`` and joins consecutive user messages, but into the last of them:
    the first one's metadata (its ``ts``) is lost."""

    name = "broken-merges-keeping-the-last-keys"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "inputs": "untagged", "mergeUsers": "yes"}

    def normalize(self, params: Params) -> Params:
        history: list[Msg] = []
        for msg in params["messages"]:
            if history and history[-1].get("role") == "user" and msg.get("role") == "user":
                parts = [p for m in (history[-1], msg) for p in _as_blocks(m)]
                history[-1] = {**msg, "content": parts}
            else:
                history.append(msg)
        return super().normalize({**params, "messages": history})


class LeavesEmptiedMessages(Reference):
    """Drops orphan results itself but leaves the message they emptied, as an empty message."""

    name = "broken-leaves-emptied-messages"

    def normalize(self, params: Params) -> Params:
        history: list[Msg] = []
        for k, msg in enumerate(params["messages"]):
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, list) and content:
                prev = params["messages"][k - 1] if k else {}
                ids = set(use_ids(prev))
                msg = {**msg, "content": [
                    b for b in content if b.get("type") != "tool_result" or b.get("tool_use_id") in ids
                ]}
            history.append(msg)
        return super().normalize({**params, "messages": history})


class DropsAlreadyEmpty(Reference):
    """Removes every message without content after pairing, the ones that came in empty too."""

    name = "broken-drops-already-empty"

    def normalize(self, params: Params) -> Params:
        out = super().normalize(params)
        kept = [m for m in out["messages"] if m.get("content") not in ("", [])]
        return {**out, "messages": kept}


class NotIdempotent(Reference):
    """Reverses the results of an already-normalized history: each call undoes the last."""

    name = "broken-not-idempotent"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "resultOrder": "any"}

    def normalize(self, params: Params) -> Params:
        out: list[Msg] = super().normalize(params)["messages"]
        if out != params["messages"]:
            return {"messages": out}
        for _, msg in _each_result_message(out):
            n = _results_first(msg)
            if n > 1:
                msg["content"][:n] = list(reversed(msg["content"][:n]))
                break
        return {"messages": out}


class ClosesDeclaredLeave(Reference):
    """Declares trailing=leave but closes a trailing tool_use with synthetic results."""

    name = "broken-closes-declared-leave"

    def normalize(self, params: Params) -> Params:
        return super().normalize({**params, "policies": {**params.get("policies", {}), "trailing": "close"}})


class SendsOnlyVisible(Reference):
    """Answers a stored history with its request: the hidden (condensed, truncated) messages are
    gone, so a caller that stores the result loses them."""

    name = "broken-sends-only-visible"

    def normalize(self, params: Params) -> Params:
        from ctxmodel.targets import reference as ref

        visible = ref.op_effective(params)["messages"]
        return super().normalize({**params, "messages": visible})
