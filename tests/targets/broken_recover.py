"""Broken ``recover`` targets, one bug each (``python:tests.targets.broken_recover:Class``), named
after the property that must catch it (asserted in ``tests/quality/test_witnesses.py``). Most are bugs the
field has shipped or reviewers found (domain §3.3, §3.5, §3.7).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from typing import Any, ClassVar

from ctxmodel.properties.json_reading import content_blocks, use_ids
from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Params, Reference, allowed, failed, recount, visible

Msg = dict[str, Any]


class LooseResultShape(Reference):
    """Reports ``error: false`` on success and leaves out truncationId (a JS-ish adapter)."""

    name = "broken-loose-result-shape"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is None:
            out["error"] = False
        out.pop("truncationId")
        return out


class NoNonpositiveGuard(Reference):
    """Treats allowed <= 0 as nothing to do and reports success (Roo takes maxTokens -1 as a reserve of -1)."""

    name = "broken-no-nonpositive-guard"

    def recover(self, params: Params) -> Params:
        if allowed(params) <= 0:
            tokens = recount(params["messages"], params.get("systemPrompt", ""))
            return {"messages": params["messages"], "error": None, "messagesRemoved": 0,
                    "prevContextTokens": tokens, "newContextTokens": tokens, "truncationId": None}
        return ref.op_recover(params)


class RefusesWithinBudget(Reference):
    """Fails whenever it is called, even within budget."""

    name = "broken-refuses-within-budget"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is None and out["messages"] == params["messages"]:
            return failed(params, "nothing to remove")
        return out


class DeletesHidden(Reference):
    """Deletes the messages it hides instead of tagging them (pre-#9665 behaviour)."""

    name = "broken-deletes-hidden"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        tid = out.get("truncationId")
        if out["error"] is None and tid:
            out["messages"] = [m for m in out["messages"] if m.get("truncationParent") != tid]
        return out


class TagsFirstVisible(Reference):
    """Also tags the first visible message (the task's opening request)."""

    name = "broken-tags-first-visible"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        tid = out.get("truncationId")
        if out["error"] is None and tid:
            mask = visible(out["messages"])
            first = mask.index(True)
            out["messages"][first] = {**out["messages"][first], "truncationParent": tid}
        return out


class SplitsPairs(Reference):
    """No normalize, no request: sends its effective history. Its cut runs one message further when
    that message is a tool_use whose results come next, leaving them orphaned (domain §3.3)."""

    name = "broken-splits-pairs"
    ops: ClassVar[list[str]] = ["describe", "effective", "recover"]

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        tid = out.get("truncationId")
        if out["error"] is not None or not tid:
            return out
        messages = out["messages"]
        mask = visible(messages)
        shown = [i for i, v in enumerate(mask) if v and not messages[i].get("isTruncationMarker")]
        for a, b in itertools.pairwise(shown[1:-1]):
            ids = set(use_ids(messages[a]))
            if ids and any(x.get("type") == "tool_result" and x.get("tool_use_id") in ids
                           for x in content_blocks(messages[b])):
                messages[a] = {**messages[a], "truncationParent": tid}
                break
        return out


class ReplacesImages(Reference):
    """Turns visible images into text placeholders while recovering (maybeRemoveImageBlocks, domain §4.4)."""

    name = "broken-replaces-images"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None:
            return out
        out["messages"] = [dict(m) for m in out["messages"]]
        mask = visible(out["messages"])
        for k, msg in enumerate(out["messages"]):
            content = msg.get("content")
            if mask[k] and isinstance(content, list):
                msg["content"] = [
                    {"type": "text", "text": "[Referenced image in conversation]"} if b.get("type") == "image" else b
                    for b in content
                ]
        return out


class CutsWhatItHides(Reference):
    """Degrades the tool results of the messages its own truncation hides (a visibility mask taken
    before the cut, reused after it)."""

    name = "broken-cuts-what-it-hides"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None or out.get("truncationId") is None:
            return out
        out["messages"] = [dict(m) for m in out["messages"]]
        for msg in out["messages"]:
            content = msg.get("content")
            if msg.get("truncationParent") != out["truncationId"] or not isinstance(content, list):
                continue
            msg["content"] = [
                {**b, "content": b["content"][: len(b["content"]) // 2]}
                if b.get("type") == "tool_result" and isinstance(b.get("content"), str) and len(b["content"]) > 1
                else b
                for b in content
            ]
        return out


class NoticeGrows(Reference):
    """Appends a truncation notice to short results it did not cut (CodeRabbit finding 1, domain §3.7)."""

    name = "broken-notice-grows"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None or out["messages"] == params["messages"]:
            return out
        mask = visible(out["messages"])
        for k, msg in enumerate(out["messages"]):
            content = msg.get("content")
            if not mask[k] or not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_result" and isinstance(block.get("content"), str) and block["content"]:
                    block["content"] += "\n[Tool result truncated: 0 characters removed to fit the context budget]"
                    return out
        return out


class ZeroProgressSuccess(Reference):
    """Zoo-Code #1254: over budget, the even-rounded cut removes nothing and is reported as success."""

    name = "broken-zero-progress-success"

    def recover(self, params: Params) -> Params:
        tokens = recount(params["messages"], params.get("systemPrompt", ""))
        if allowed(params) > 0 and tokens > allowed(params) and len(params["messages"]) < 5:
            return {"messages": params["messages"], "error": None, "messagesRemoved": 0,
                    "prevContextTokens": tokens, "newContextTokens": tokens, "truncationId": str(uuid.uuid4())}
        return ref.op_recover(params)


def _roomier(params: Params) -> Params | None:
    """The reference's recovery against a larger window: progress, but not enough for the real one."""
    for factor in (2, 4, 16, 64):
        out = ref.op_recover({**params, "contextWindow": factor * int(params["contextWindow"])})
        if out["error"] is None and out["messages"] != params["messages"]:
            return out
    return None


def _short_of_budget(params: Params) -> Params | None:
    """A recovery that makes progress yet stays over the real budget, when one exists: the
    reference's own, aimed at a budget halfway between the real one and the current count."""
    budget = allowed(params)
    system = params.get("systemPrompt", "")
    before = recount(params["messages"], system)
    if budget <= 0 or before <= budget + 1:
        return None
    reserve = int(params.get("maxTokens", 0)) if int(params.get("maxTokens", 0)) > 0 else 8192
    for target in ((budget + before) // 2, before - 1):
        window = -(-(target + reserve) * 10 // 9)
        out = ref.op_recover({**params, "contextWindow": window})
        if out["error"] is None and out["messages"] != params["messages"]:
            after = recount(out["messages"], system)
            if after > budget:
                out["newContextTokens"] = after
                return out
    return None


class SucceedsOverBudget(Reference):
    """Reports success far over budget (Roo-Code: 1.3 M tokens against 172 k allowed)."""

    name = "broken-succeeds-over-budget"

    def recover(self, params: Params) -> Params:
        return _short_of_budget(params) or ref.op_recover(params)


class ErrorKeepsPartialWork(Reference):
    """Fails, but returns what it had done so far: a marker it inserted before giving up."""

    name = "broken-error-keeps-partial-work"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None:
            partial = _roomier(params) if allowed(params) > 0 else None
            out["messages"] = partial["messages"] if partial is not None else [*params["messages"], {
                "role": "user", "content": "[Sliding window truncation: 0 messages hidden to reduce context]",
                "isTruncationMarker": True, "truncationId": "partial",
            }]
        return out


class ErrorTextPlain(Reference):
    """Says "recovery failed" in its own words."""

    name = "broken-error-text-plain"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None:
            out["error"] = "could not shrink the context"
        return out


class ClaimsToFit(Reference):
    """Declares converges, then reports every result as fitting whatever it counts."""

    name = "broken-claims-to-fit"
    policies: ClassVar[dict[str, str]] = {**Reference.policies, "recoverSuccess": "converges"}

    def recover(self, params: Params) -> Params:
        out = _short_of_budget(params) or ref.op_recover(params)
        if out["error"] is None:
            out["newContextTokens"] = min(out["newContextTokens"], allowed(params))
        return out


class GivesUp(Reference):
    """Never recovers: a controlled error whenever it is over budget (valid, but a warning)."""

    name = "broken-gives-up"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["messages"] != params["messages"]:
            return failed(params, "this target does not truncate")
        return out


def _edit_new_marker(out: Params, edit: Callable[[Params, str], Params]) -> Params:
    """A successful cut's own marker rewritten by ``edit`` (the marker witnesses differ only there)."""
    tid = out.get("truncationId")
    if out["error"] is None and tid:
        out["messages"] = [
            edit(m, tid) if m.get("isTruncationMarker") and m.get("truncationId") == tid else m
            for m in out["messages"]
        ]
    return out


class MarkerAsAssistant(Reference):
    """Writes its marker as an assistant message (the layout before Roo-Code #9844, domain §3.6)."""

    name = "broken-marker-as-assistant"

    def recover(self, params: Params) -> Params:
        return _edit_new_marker(ref.op_recover(params), lambda m, tid: {**m, "role": "assistant"})


class UnusedMarker(Reference):
    """Tags its messages with one id and gives the marker another (an id minted twice)."""

    name = "broken-unused-marker"

    def recover(self, params: Params) -> Params:
        return _edit_new_marker(ref.op_recover(params), lambda m, tid: {**m, "truncationId": f"{tid}-marker"})


class StatusMarker(Reference):
    """Appends a status notice after every recovery, written as a truncation marker with an id of its
    own that hides nothing: an extra user message in every later request (no marker when nothing is
    removed: Roo-Code #9844, domain §3.6)."""

    name = "broken-status-marker"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is None and out["messages"] != params["messages"]:
            out["messages"] = [*out["messages"], {
                "role": "user",
                "content": f"[Context recovered: {out['messagesRemoved']} messages hidden, "
                           f"{len(out.get('degraded', []))} tool results shortened]",
                "isTruncationMarker": True, "truncationId": str(uuid.uuid4()),
            }]
        return out


class MiscountsRemoved(Reference):
    """Reports as removed the messages it meant to hide, even when it gave up, and counts its marker
    among them when it succeeds (messagesRemoved != the newly tagged messages, domain §7 C11)."""

    name = "broken-miscounts-removed"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        if out["error"] is not None:
            out["messagesRemoved"] = 1
        elif out.get("truncationId"):
            out["messagesRemoved"] += 1
        return out
