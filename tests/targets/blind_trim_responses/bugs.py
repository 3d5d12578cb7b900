"""Bug variants: each breaks exactly one rule of contract §10 (or §10.8) the way a real Responses
trimmer might.

Run as ``python:tests.targets.blind_trim_responses.bugs:CLASS``. Each docstring names the rule it
breaks, the code the contract gives that rule, and the library behaviour it imitates. Everything
else each one does is a legitimate trimmer of ``legit`` (mostly ``KeepSystemNewest``), so the one
defect is the only one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, ClassVar

from tests.targets.blind_trim_responses._items import (
    DEFAULT_POLICIES,
    Item,
    Params,
    ResponsesTrimmer,
    budget_of,
    close,
    indices_of,
    is_assistant_message,
    is_call,
    is_message,
    is_reasoning,
    last_user,
    steps,
    strippable_reasoning,
)
from tests.targets.blind_trim_responses.legit import (
    KeepSystemNewest,
    StripAnyReasoning,
    StripOldReasoning,
)


class ReasoningAsItsOwnItem(KeepSystemNewest):
    """§10.1 / §10.8 (``pairing-broken`` when the call has an ``id``, else ``reasoning-stripped``):
    reasoning items count as units of their own, so the newest-steps window may open on a
    ``function_call`` or assistant message whose ``reasoning`` item was just cut off. The OpenAI
    Agents SDK's session trimming before PR #4148, which counted ``rs_`` items as separate messages
    and cut between a reasoning item and its call."""

    name = "blind-responses-bug-reasoning-own-item"

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        ss = steps(items, bind_reasoning=False)
        floor = close(self.floor_items(items), ss)
        return self.newest_steps(items, floor, ss)


class OutputsStandAlone(KeepSystemNewest):
    """§10.1 (``pairing-broken``: a ``function_call_output`` whose ``call_id`` no earlier
    ``function_call`` has): outputs are units of their own, treated like the user side of the
    conversation, so the window may open after a call and keep its output. The "No tool call found
    for function call output" reports of continuedev/continue #10092 and microsoft/vscode #320060,
    where a history window starts on a tool output."""

    name = "blind-responses-bug-outputs-stand-alone"

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        ss = steps(items, bind_outputs=False)
        floor = close(self.floor_items(items), ss)
        # With outputs unbound no output is an orphan: every one is kept like any other item.
        for k in range(len(ss) + 1):
            yield floor | indices_of(ss[k:])


def _reasoning_rewritten(items: list[Item], edit: Any) -> list[Item]:
    out: list[Item] = []
    for item in items:
        if is_reasoning(item):
            item = copy.deepcopy(item)
            edit(item)
        out.append(item)
    return out


class DropsEmptySummary(KeepSystemNewest):
    """§10.8 (``reasoning-edited``; the API answers ``Missing required parameter:
    'input[N].summary'``): every reasoning item it returns is re-serialised without empty fields,
    so ``summary: []`` disappears. A replay through a model dumped with ``exclude_none`` /
    "skip empty lists" (newo-ether/Agora #126, GizClaw/flowcraft #528)."""

    name = "blind-responses-bug-drops-empty-summary"

    def trim(self, params: Params) -> Params:
        reply = super().trim(params)
        if "messages" not in reply:
            return reply

        def edit(item: Item) -> None:
            if item.get("summary") == []:
                del item["summary"]

        return {"messages": _reasoning_rewritten(reply["messages"], edit)}


class StripsEncryptedContent(KeepSystemNewest):
    """§10.8 (``reasoning-edited``): ``encrypted_content`` is removed from every reasoning item it
    returns, to "save tokens" on a blob the client cannot read. A stateless (``store: false``)
    client that forgets the reasoning must go back byte for byte (domain §5.8: "reasoning is
    opaque")."""

    name = "blind-responses-bug-strips-encrypted-content"

    def trim(self, params: Params) -> Params:
        reply = super().trim(params)
        if "messages" not in reply:
            return reply
        return {"messages": _reasoning_rewritten(reply["messages"],
                                                 lambda item: item.pop("encrypted_content", None))}


class StripsCurrentTurn(StripAnyReasoning):
    """§10.8 (``current-reasoning-stripped``): declares ``reasoningRequired=current-turn`` but strips
    reasoning (before items without ``id``) in every turn, the current one included. A "drop old
    reasoning" helper whose loop runs to the end of the history instead of stopping at the last
    user message (the lost-``reasoning_content`` reports of continuedev/continue #9913, #10498)."""

    name = "blind-responses-bug-strips-current-turn"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}


class TrailingReasoning(KeepSystemNewest):
    """§10.1 (``pairing-broken``: a ``reasoning`` item not followed by the item it produced): before
    trimming, trailing assistant ``message`` items are popped so the request does not end on the
    model's own answer, and the loop stops at the ``reasoning`` item in front of the popped message,
    leaving it last. A ``while items[-1].role == "assistant": items.pop()`` guard written for Chat
    messages (continuedev/continue #8933, #10428: "provided without its required following item")."""

    name = "blind-responses-bug-trailing-reasoning"

    def trim(self, params: Params) -> Params:
        items: list[Item] = list(params["messages"])
        while len(items) > 1 and is_assistant_message(items[-1]):
            items.pop()
        return super().trim({**params, "messages": items})


class StripsBeforeIds(StripOldReasoning):
    """§10.1 (``pairing-broken``: an item with an ``id`` returned without its reasoning item; the API
    answers "provided without its required 'reasoning' item"): under ``trimReasoning=strip`` it
    drops old turns' reasoning whatever follows it, ``fc_``/``msg_`` ids included. A session that
    drops reasoning but keeps the ids of the items it produced (continuedev/continue #12620, before
    the Agents SDK's ``reasoning_item_id_policy="omit"``)."""

    name = "blind-responses-bug-strips-before-ids"

    def strippable(self, items: list[Item]) -> set[int]:
        lu = last_user(items)
        return strippable_reasoning(items, before=0 if lu is None else lu, only_idless=False)


class StripsUndeclared(StripOldReasoning):
    """§10.8 (``reasoning-stripped``): ``StripOldReasoning`` exactly, but declaring the default
    ``trimReasoning=keep``: old turns' reasoning is dropped while the declaration promises every
    returned item its reasoning. A library that saves tokens by forgetting old reasoning items
    behind a docstring that says history is replayed as stored."""

    name = "blind-responses-bug-strips-undeclared"
    policies: ClassVar[dict[str, str]] = dict(DEFAULT_POLICIES)


class PinsLastUserAtEnd(KeepSystemNewest):
    """§10.2 (``moved``): when it trims, the answer is rebuilt as ``[*kept items, last user
    message]``, so the current turn's calls and outputs end up before the question that started
    them. The ``system + trimmed_history + [current_input]`` rebuild of agent loops that treat the
    newest user input as something to append rather than an item of the history."""

    name = "blind-responses-bug-pins-last-user"

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        reply = super().trim(params)
        out = reply.get("messages")
        lu = last_user(items)
        if out is None or out == items or lu is None:
            return reply
        question = items[lu]
        return {"messages": [item for item in out if item is not question] + [question]}


class RegroupsSteps(KeepSystemNewest):
    """§10.2 (``moved``): the kept steps are emitted one after another, each step's items together,
    so an output that came several items after its call is pulled up to the call. A repair that
    rebuilds "reasoning, call, output" groups (openai/openai-agents-python PR #4148's grouping)
    and writes them back group by group."""

    name = "blind-responses-bug-regroups-steps"

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        budget = budget_of(params)
        if budget is None or self.fits(items, budget):
            return {"messages": list(items)}
        ss = steps(items)
        for keep in self.candidates(items):
            out = [items[i] for s in ss if set(s.indices) <= keep for i in s.indices]
            if out and self.fits(out, budget):
                return {"messages": out}
        return self.nothing_fits(items, budget)


class CountsMessagesOnly(KeepSystemNewest):
    """§10.3 (``over-budget``): candidates are measured by their ``message`` items alone, so calls,
    outputs and reasoning are free and the answer runs over ``maxTokens`` by its own ``count``. The
    Chat-era ``num_tokens_from_messages`` recipe (role and content of each message) run over
    Responses items, where a tool's traffic lives outside ``message`` items."""

    name = "blind-responses-bug-counts-messages-only"

    def fits(self, items: list[Item], budget: int) -> bool:
        return self.tokens([item for item in items if is_message(item)]) <= budget


class EmptiesInput(ResponsesTrimmer):
    """§10.1 (``emptied``): the newest steps that fit, and when not even the last one fits, an empty
    list (floor empty: ``trimSystem=any``, ``trimLastUser=any``, so the error would have been
    allowed). LangChain ``trim_messages``, which returns ``[]`` when no message fits; the API
    refuses the empty ``input``."""

    name = "blind-responses-bug-empties-input"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimSystem": "any", "trimLastUser": "any"}

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        return self.newest_steps(items, set())

    def nothing_fits(self, items: list[Item], budget: int) -> Params:
        return {"messages": []}


class CountIgnoresArguments(KeepSystemNewest):
    """§10.7 (``arguments-ignored``): ``count`` counts a ``function_call``'s name but not its
    ``arguments``, so the budget misses the bulk of tool traffic. A counter that sums the text of
    ``content`` and ``name`` fields and skips the JSON string of the arguments."""

    name = "blind-responses-bug-count-ignores-arguments"

    def count(self, params: Params) -> Params:
        items = copy.deepcopy(params.get("messages") or [])
        for item in items:
            if is_call(item) and "arguments" in item:
                item["arguments"] = ""
        return super().count({**params, "messages": items})


class LastUserNeedsType(KeepSystemNewest):
    """§10.5 (``last-user-dropped``): the last user message is recognised only among items whose
    ``type`` is ``"message"``, so when it is an easy input message (no ``type``, the SDK's
    ``EasyInputMessageParam``) the floor does not hold it and it is dropped with the old steps.
    Code that filters ``item.get("type") == "message"`` where an item without ``type`` is a
    message too."""

    name = "blind-responses-bug-last-user-needs-type"

    def floor_items(self, items: list[Item]) -> set[int]:
        keep = super().floor_items(items)
        lu = last_user(items)
        if lu is not None and items[lu].get("type") != "message":
            keep.discard(lu)
        return keep


__all__ = ["CountIgnoresArguments", "CountsMessagesOnly", "DropsEmptySummary", "EmptiesInput",
           "LastUserNeedsType", "OutputsStandAlone", "PinsLastUserAtEnd", "ReasoningAsItsOwnItem",
           "RegroupsSteps", "StripsBeforeIds", "StripsCurrentTurn", "StripsEncryptedContent",
           "StripsUndeclared", "TrailingReasoning"]
