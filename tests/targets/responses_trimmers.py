"""Trimmers of OpenAI Responses items (contract §10, §10.8): legitimate ones that make other valid
choices than the reference and declare them, and broken ones with one bug each, the witnesses of the
properties that must catch them (declared with the property). Each is a
``python:tests.targets.responses_trimmers:Class`` target declaring ``openai-responses``.

They read items with their own helpers, not ``ctxmodel.trimming``, and count with the reference's
Responses count, which their ``count`` op answers with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref

Params = dict[str, Any]
Item = dict[str, Any]


def _kind(item: Item) -> Any:
    return item.get("type", "message")


def _is_user(item: Item) -> bool:
    return _kind(item) == "message" and item.get("role") == "user"


def _last_user(items: list[Item]) -> int:
    return max((i for i, item in enumerate(items) if _is_user(item)), default=-1)


class ReferenceResponses:
    """The reference's ``trim`` and ``count`` on Responses items, as a worker target."""

    name = "trimmer-reference-responses"
    dialect: ClassVar[str] = "openai-responses"
    policies: ClassVar[dict[str, str]] = dict(ref.REFERENCE_TRIM_POLICIES)

    def describe(self, params: Params) -> Params:
        return {"protocol": 1, "name": self.name, "version": "1", "ops": ["describe", "trim", "count"],
                "tokenizer": "zoo", "dialect": self.dialect, "policies": dict(self.policies)}

    def count(self, params: Params) -> Params:
        return ref.op_responses_count(params)

    def trim(self, params: Params) -> Params:
        return ref.op_responses_trim(params)

    def measure(self) -> Callable[[list[Item]], int]:
        def count(items: list[Item]) -> int:
            tokens: int = self.count({"messages": items})["tokens"]
            return tokens

        return count

    def safe_start(self, items: list[Item], start: int) -> bool:
        """A suffix from ``start`` cuts no pair: no output whose call is before it, no call run or
        item whose reasoning is before it (the reasoning item is where such a suffix starts)."""
        if start >= len(items):
            return True
        if start > 0 and _kind(items[start - 1]) == "reasoning":
            return False
        if start > 0 and _kind(items[start]) == "function_call" and _kind(items[start - 1]) == "function_call":
            return False
        before = {items[i].get("call_id") for i in range(start) if _kind(items[i]) == "function_call"}
        return not any(_kind(items[j]) == "function_call_output" and items[j].get("call_id") in before
                       for j in range(start, len(items)))


class SuffixCutResponses(ReferenceResponses):
    """The longest suffix that fits from a safe start (the reasoning item, never an output cut from
    its call): a sliding window over the session's items, as an agent's session store keeps them."""

    name = "trimmer-suffix-cut-responses"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        budget = params.get("maxTokens")
        count = self.measure()
        if not isinstance(budget, int) or count(items) <= budget:
            return {"messages": list(items)}
        for start in range(1, len(items)):
            if self.safe_start(items, start) and count(items[start:]) <= budget:
                return {"messages": items[start:]}
        return {"error": f"nothing fits {budget} tokens"}


class StripsOldReasoning(ReferenceResponses):
    """Reasoning of earlier turns dropped first where the item after it has no ``id`` (the server cannot
    tie them), the current turn's kept; then the reference's trim: DeepSeek's and Anthropic's "only
    the current turn's reasoning is needed", carried to Responses (domain §5.8)."""

    name = "trimmer-strips-old-reasoning"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        budget = params.get("maxTokens")
        if not isinstance(budget, int) or self.measure()(items) <= budget:
            return {"messages": list(items)}
        last = _last_user(items)
        kept = [item for n, item in enumerate(items)
                if not (_kind(item) == "reasoning" and n < last and n + 1 < len(items)
                        and not isinstance(items[n + 1].get("id"), str) and _kind(items[n + 1]) != "reasoning"
                        and not _is_user(items[n + 1]))]
        return ref.op_responses_trim({**params, "messages": kept})


LEGITIMATE: tuple[str, ...] = ("ReferenceResponses", "SuffixCutResponses", "StripsOldReasoning")


# -- broken: one bug each --------------------------------------------------------------------------


class CountsItemsOneByOne(ReferenceResponses):
    """The newest items that fit, each counted as a message of its own: the window may open on a
    call's output or between a reasoning item and its call (openai-agents-python PR #4148's report)."""

    name = "broken-counts-items-one-by-one"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        count = self.measure()
        for start in range(len(items)):
            if count(items[start:]) <= params["maxTokens"]:
                return {"messages": items[start:]}
        return {"error": "nothing fits"}


class DropsReasoningBeforeAnIdItem(ReferenceResponses):
    """Declares ``trimReasoning=strip`` and drops every reasoning item, also before an item the server
    stored with it by ``id`` ("provided without its required 'reasoning' item")."""

    name = "broken-drops-reasoning-before-an-id-item"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip"}

    def trim(self, params: Params) -> Params:
        items = [i for i in params["messages"] if _kind(i) != "reasoning" or not self._followed(params, i)]
        return ref.op_responses_trim({**params, "messages": items})

    @staticmethod
    def _followed(params: Params, item: Item) -> bool:
        items: list[Item] = params["messages"]
        n = next(k for k, other in enumerate(items) if other is item)
        return n + 1 < len(items) and _kind(items[n + 1]) in ("function_call", "message") \
            and not _is_user(items[n + 1])


class StripsReasoningUnderKeep(ReferenceResponses):
    """Drops reasoning in front of items without ``id`` (the request still passes) while declaring
    ``trimReasoning=keep``: what it says it keeps, it strips."""

    name = "broken-strips-reasoning-under-keep"

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        kept = [item for n, item in enumerate(items)
                if not (_kind(item) == "reasoning" and n + 1 < len(items) and _kind(items[n + 1]) == "function_call"
                        and not isinstance(items[n + 1].get("id"), str))]
        return ref.op_responses_trim({**params, "messages": kept})


class StripsTheCurrentTurn(StripsReasoningUnderKeep):
    """Declares ``strip`` with ``reasoningRequired=current-turn`` and strips the current turn's
    reasoning too (DeepSeek thinking mode: "Missing `reasoning_content` field")."""

    name = "broken-strips-the-current-turn"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}


class DropsEmptySummary(ReferenceResponses):
    """Re-serialises the reasoning items it keeps without an empty ``summary`` (``omitempty``):
    "Missing required parameter: 'input[N].summary'" (GizClaw/flowcraft PR #528)."""

    name = "broken-drops-empty-summary"

    def trim(self, params: Params) -> Params:
        answer = ref.op_responses_trim(params)
        if answer.get("messages") is None:
            return answer
        return {"messages": [{k: v for k, v in i.items() if not (k == "summary" and v == [])}
                             if _kind(i) == "reasoning" else i for i in answer["messages"]]}


class EditsEncryptedContent(ReferenceResponses):
    """Declares ``trimPartial=yes`` and shortens long strings of the items it keeps, the reasoning's
    ``encrypted_content`` among them (only text may be cut)."""

    name = "broken-edits-encrypted-content"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimPartial": "yes"}

    def trim(self, params: Params) -> Params:
        answer = ref.op_responses_trim(params)
        if answer.get("messages") is None:
            return answer
        out = []
        for item in answer["messages"]:
            encrypted = item.get("encrypted_content")
            if _kind(item) == "reasoning" and isinstance(encrypted, str) and len(encrypted) > 16:
                item = {**item, "encrypted_content": encrypted[:16]}
            out.append(item)
        return {"messages": out}
