"""Legitimate trimmers: each obeys every rule of contract §10 and declares the policies it honours.

Run as ``python:tests.targets.blind_trim.legit:CLASS``. None returns an orphan ``tool`` message when
it trims, and all keep or drop whole groups (``_chat.groups``), so none adds a pairing violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from tests.targets.blind_trim._chat import (
    ChatTrimmer,
    Msg,
    Params,
    budget_of,
    groups,
    indices_of,
    is_system,
    is_user,
    last_user,
    pick,
)


class KeepSystemNewest(ChatTrimmer):
    """Every system message in its place, the last user message, and the newest groups that fit
    (LangChain ``trim_messages(strategy="last", include_system=True, start_on="human")`` extended to
    keep every system message). Only the floor left and over budget: the controlled error."""

    name = "blind-keep-system-newest"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        return self.newest_groups(messages, self.floor(messages))


class DropOldestTurns(ChatTrimmer):
    """Whole turns dropped oldest first (a turn starts at a user message), a leading system message
    kept; then the oldest steps of the last turn after its user message; then the floor alone
    (LlamaIndex ``ChatMemoryBuffer``-style eviction of whole exchanges)."""

    name = "blind-drop-oldest-turns"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        floor = self.floor(messages)
        gs = [g for g in groups(messages) if g.kind != "orphan"]
        starts = [i for i, m in enumerate(messages) if is_user(m)]
        for start in starts:
            yield floor | indices_of(g for g in gs if g.start >= start)
        lu = last_user(messages)
        after = [g for g in gs if lu is None or g.start > lu]
        for k in range(len(after) + 1):
            yield floor | indices_of(after[k:])


class HeadAndTail(ChatTrimmer):
    """The task (every system message and the first user message) and the newest groups that fit
    after it; without room for the first user message, the newest groups after the floor."""

    name = "blind-head-and-tail"
    # Written before contract §10.9; its head may leave room for less than the last turn: trimKeep=any.
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens", "trimKeep": "any"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        floor = self.floor(messages)
        first_user = next((i for i, m in enumerate(messages) if is_user(m)), None)
        if first_user is not None:
            yield from self.newest_groups(messages, floor | {first_user})
        yield from self.newest_groups(messages, floor)


class ToolTrafficFirst(ChatTrimmer):
    """Old tool traffic goes first: assistant messages with calls, each with its tool messages,
    oldest first; then the other messages oldest first, never the floor (an Anthropic
    ``clear_tool_uses``-like pruner that falls back to dropping turns)."""

    name = "blind-tool-traffic-first"
    # Written before contract §10.9; it drops the last turn's calls before older text: trimKeep=any.
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens", "trimKeep": "any"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        floor = self.floor(messages)
        gs = [g for g in groups(messages) if g.kind != "orphan"]
        order = [g for g in gs if g.kind == "calls"] + [g for g in gs if g.kind != "calls"]
        order = [g for g in order if not set(g.indices) & floor]
        kept = set(gs)
        yield floor | indices_of(kept)
        for g in order:
            kept.discard(g)
            yield floor | indices_of(kept)


class SystemMayGo(ChatTrimmer):
    """System messages dropped like the others (``trimSystem=any``): the last user message and the
    newest groups that fit."""

    name = "blind-system-may-go"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        return self.newest_groups(messages, self.floor(messages))


class AllOrNothing(ChatTrimmer):
    """The input when it fits, else the controlled error; its floor is empty (``trimSystem=any``,
    ``trimLastUser=any``), so the error is allowed whenever the input does not fit."""

    name = "blind-all-or-nothing"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any",
                                          "trimPartial": "no", "trimBudget": "tokens"}


class PartialLastUser(KeepSystemNewest):
    """``KeepSystemNewest``, and when even the floor is over budget, the systems with the longest
    prefix of the last user message's string content that fits (``trimPartial=yes``; LangChain
    ``allow_partial=True`` applied to the one message the policies keep)."""

    name = "blind-partial-last-user"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "yes", "trimBudget": "tokens"}

    def trim(self, params: Params) -> Params:
        reply = super().trim(params)
        if "error" not in reply:
            return reply
        messages: list[Msg] = params["messages"]
        budget = budget_of(params)
        lu = last_user(messages)
        if budget is None or lu is None or not isinstance(messages[lu].get("content"), str):
            return reply
        text: str = messages[lu]["content"]
        systems = [i for i, m in enumerate(messages) if is_system(m)]

        def attempt(n: int) -> list[Msg]:
            out = pick(messages, [*systems, lu])
            position = sorted([*systems, lu]).index(lu)
            out[position] = {**messages[lu], "content": text[:n]}
            return out

        lo, hi = 1, len(text) - 1
        best = 0
        while lo <= hi:  # the longest prefix that fits, assuming longer never counts less
            mid = (lo + hi) // 2
            if self.fits(attempt(mid), budget):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        for n in range(best, 0, -1):  # verified, in case the assumption failed
            out = attempt(n)
            if self.fits(out, budget):
                return {"messages": out}
        return reply


__all__ = ["AllOrNothing", "DropOldestTurns", "HeadAndTail", "KeepSystemNewest", "PartialLastUser",
           "SystemMayGo", "ToolTrafficFirst"]
