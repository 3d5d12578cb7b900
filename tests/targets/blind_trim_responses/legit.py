"""Legitimate Responses trimmers: each obeys every rule of contract §10 and §10.8 and declares the
policies it honours.

Run as ``python:tests.targets.blind_trim_responses.legit:CLASS``. All keep or drop whole steps
(``_items.steps``) and drop orphan outputs when they trim, so none adds a pairing violation; the
``trimReasoning=strip`` ones drop a reasoning item only where §10.8 allows it (the item after it
has no ``id``, and under ``reasoningRequired=current-turn`` it lies before the last user message).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from tests.targets.blind_trim_responses._items import (
    DEFAULT_POLICIES,
    Item,
    Params,
    ResponsesTrimmer,
    budget_of,
    indices_of,
    is_user,
    last_user,
    pick,
    steps,
    strippable_reasoning,
    user_starts,
)


class KeepSystemNewest(ResponsesTrimmer):
    """Every system and developer message in its place, the last user message, and the newest
    steps that fit (LangChain ``trim_messages(strategy="last", include_system=True)`` over items,
    with the Agents SDK's grouping of reasoning, call and output). Only the floor left and over
    budget: the controlled error."""

    name = "blind-responses-keep-system-newest"
    policies: ClassVar[dict[str, str]] = dict(DEFAULT_POLICIES)

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        return self.newest_steps(items, self.floor(items))


class DropOldestTurns(ResponsesTrimmer):
    """Whole turns dropped oldest first (a turn starts at a user message), a leading system message
    kept; then the oldest steps of the last turn after its user message; then the floor alone
    (the reference's shape, with ``trimSystem=first``)."""

    name = "blind-responses-drop-oldest-turns"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimSystem": "first"}

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        floor = self.floor(items)
        ss = [s for s in steps(items) if s.kind != "orphan"]
        for start in user_starts(items):
            yield floor | indices_of(s for s in ss if s.start >= start)
        lu = last_user(items)
        after = [s for s in ss if lu is None or s.start > lu]
        for k in range(len(after) + 1):
            yield floor | indices_of(after[k:])


class HeadAndTail(ResponsesTrimmer):
    """The task (every system message and the first user message) and the newest steps that fit
    after it; without room for the first user message, the newest steps after the floor (AutoGen
    ``HeadAndTailChatCompletionContext`` without its placeholder)."""

    name = "blind-responses-head-and-tail"
    # Written before contract §10.9; its head may leave room for less than the last turn: trimKeep=any.
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimKeep": "any"}

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        floor = self.floor(items)
        first_user = next((i for i, item in enumerate(items) if is_user(item)), None)
        if first_user is not None:
            head = floor | indices_of(s for s in steps(items) if first_user in s.indices)
            yield from self.newest_steps(items, head)
        yield from self.newest_steps(items, floor)


class ToolTrafficFirst(ResponsesTrimmer):
    """Old tool traffic goes first: each call step (its reasoning, its parallel calls and their
    outputs) oldest first, then the other steps oldest first, never the floor (an Anthropic
    ``clear_tool_uses``-like pruner that falls back to dropping turns)."""

    name = "blind-responses-tool-traffic-first"
    # Written before contract §10.9; it drops the last turn's calls before older text: trimKeep=any.
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimKeep": "any"}

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        floor = self.floor(items)
        ss = [s for s in steps(items) if s.kind != "orphan"]
        order = [s for s in ss if s.kind == "calls"] + [s for s in ss if s.kind != "calls"]
        order = [s for s in order if not set(s.indices) & floor]
        kept = list(ss)
        yield floor | indices_of(kept)
        for s in order:
            kept.remove(s)
            yield floor | indices_of(kept)


class SystemMayGo(ResponsesTrimmer):
    """System and developer messages dropped like the others (``trimSystem=any``): the last user
    message and the newest steps that fit."""

    name = "blind-responses-system-may-go"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimSystem": "any"}

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        return self.newest_steps(items, self.floor(items))


class AllOrNothing(ResponsesTrimmer):
    """The input when it fits, else the controlled error; its floor is empty (``trimSystem=any``,
    ``trimLastUser=any``), so the error is allowed whenever the input does not fit."""

    name = "blind-responses-all-or-nothing"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimSystem": "any", "trimLastUser": "any"}


class _StripThenNewest(ResponsesTrimmer):
    """Over budget: first the input less the reasoning ``strippable`` names, then the newest steps
    of that list with the floor. Reasoning is stripped only when the input does not fit, so an
    input that fits comes back unchanged."""

    def strippable(self, items: list[Item]) -> set[int]:
        return set()

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        budget = budget_of(params)
        if budget is None or self.fits(items, budget):
            return {"messages": list(items)}
        drop = self.strippable(items)
        stripped = pick(items, (i for i in range(len(items)) if i not in drop))
        if stripped and self.fits(stripped, budget):
            return {"messages": stripped}
        found = self.first_fit(stripped, budget, self.newest_steps(stripped, self.floor(stripped)))
        if found is not None:
            return {"messages": found}
        return self.nothing_fits(items, budget)


class StripOldReasoning(_StripThenNewest):
    """``trimReasoning=strip``: over budget, the reasoning items of turns before the last user
    message whose following item has no ``id`` go first (the Agents SDK with
    ``reasoning_item_id_policy="omit"``, DeepSeek's guide: earlier turns' reasoning may be dropped),
    then the newest steps. No user message: nothing is an old turn, nothing is stripped."""

    name = "blind-responses-strip-old-reasoning"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimReasoning": "strip"}

    def strippable(self, items: list[Item]) -> set[int]:
        lu = last_user(items)
        return strippable_reasoning(items, before=0 if lu is None else lu)


class StripAnyReasoning(_StripThenNewest):
    """``trimReasoning=strip`` with ``reasoningRequired=no``: over budget, every reasoning item
    whose following item has no ``id`` goes first, the current turn's included (a provider that
    takes a rebuilt item without its reasoning), then the newest steps."""

    name = "blind-responses-strip-any-reasoning"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimReasoning": "strip"}

    def strippable(self, items: list[Item]) -> set[int]:
        return strippable_reasoning(items, before=None)


class PruneOldReasoning(ResponsesTrimmer):
    """A pruner without budget (``trimBudget=none``) under ``trimReasoning=strip`` and
    ``reasoningRequired=current-turn``: it always drops the reasoning of turns before the last user
    message where the following item has no ``id``, and nothing else (the "drop previous turns'
    reasoning_content" step DeepSeek's examples and several agents run before each request)."""

    name = "blind-responses-prune-old-reasoning"
    policies: ClassVar[dict[str, str]] = {**DEFAULT_POLICIES, "trimBudget": "none", "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        lu = last_user(items)
        drop = strippable_reasoning(items, before=0 if lu is None else lu)
        return {"messages": pick(items, (i for i in range(len(items)) if i not in drop))}


__all__ = ["AllOrNothing", "DropOldestTurns", "HeadAndTail", "KeepSystemNewest", "PruneOldReasoning",
           "StripAnyReasoning", "StripOldReasoning", "SystemMayGo", "ToolTrafficFirst"]
