"""Bug variants: each breaks exactly one rule of contract §10 the way a real trimmer might.

Run as ``python:tests.targets.blind_trim.bugs:CLASS``. Each docstring names the rule it breaks, the
code the contract gives that rule, and the library behaviour it imitates. Everything else each one
does is the legitimate ``KeepSystemNewest`` (or a close relative), so the one defect is the only one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import ClassVar

from tests.targets.blind_trim._chat import (
    ChatTrimmer,
    Msg,
    Params,
    budget_of,
    groups,
    has_calls,
    indices_of,
    is_system,
    is_tool,
    is_user,
    last_user,
    pick,
)
from tests.targets.blind_trim.legit import KeepSystemNewest


class ToolFirstSuffix(ChatTrimmer):
    """§10.1 (``pairing-broken``): the longest raw suffix that fits after a leading system message,
    cut at any message, so the window may open on a ``tool`` message whose call was cut, or in the
    middle of a run of parallel answers. LangChain ``trim_messages(strategy="last",
    include_system=True)`` called without ``start_on="human"``."""

    name = "blind-bug-tool-first-suffix"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "any",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        head = {0} if messages and is_system(messages[0]) else set()
        for start in range(len(head), len(messages) + 1):
            yield head | set(range(start, len(messages)))


class ParallelHalf(ChatTrimmer):
    """§10.1 (``pairing-broken``): oldest messages dropped one unit at a time, where the unit of an
    assistant message with calls is that message and the *one* tool message after it, as if every
    assistant turn made a single call: with parallel calls, the other answers stay behind as tool
    messages whose call is gone. A hand-rolled ``while over: drop(history[0:2])`` window (the
    "assistant + tool" pair assumption several agent loops and LiteLLM-style trimmers make)."""

    name = "blind-bug-parallel-half"

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        floor = self.floor(messages)
        removed: set[int] = set()
        everything = set(range(len(messages)))
        for i, message in enumerate(messages):
            if i in floor or i in removed:
                continue
            unit = {i}
            if has_calls(message) and i + 1 < len(messages) and is_tool(messages[i + 1]):
                unit.add(i + 1)
            removed |= unit
            yield everything - removed


class DropsSystem(ChatTrimmer):
    """§10.4 (``system-dropped``): declares ``trimSystem=keep`` but drops system messages with the
    old turns, keeping only the last user message and the newest groups. LangChain
    ``trim_messages`` with its default ``include_system=False`` behind a wrapper that documents the
    system prompt as always sent."""

    name = "blind-bug-drops-system"

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        lu = last_user(messages)
        return self.newest_groups(messages, set() if lu is None else {lu})


class Untrimmed(KeepSystemNewest):
    """§10.3 (``untrimmed``): when not even the floor fits, the input comes back unchanged as if it
    had been trimmed, instead of the controlled error. LiteLLM ``utils.trim_messages``, which
    catches its own failure and returns the original messages."""

    name = "blind-bug-untrimmed"

    def nothing_fits(self, messages: list[Msg], budget: int) -> Params:
        return {"messages": list(messages)}


class Mutates(KeepSystemNewest):
    """§10.6 (``purity.trim``): the right answer, made by deleting the dropped messages from the
    caller's own list in place and returning that list. A memory buffer's
    ``while count(history) > limit: history.pop(0)`` run on the list it was handed (LlamaIndex
    ``ChatMemoryBuffer`` and AutoGen contexts copy first; hand-rolled ones often do not)."""

    name = "blind-bug-mutates"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        reply = super().trim(params)
        if "messages" in reply and reply["messages"] != messages:
            keep = {id(m) for m in reply["messages"]}
            for i in range(len(messages) - 1, -1, -1):
                if id(messages[i]) not in keep:
                    del messages[i]
            return {"messages": messages}
        return reply


class CountNoArguments(KeepSystemNewest):
    """§10.7 (``arguments-ignored``): ``count`` counts content and tool names but not the tool
    calls' ``arguments``, so the budget is measured by a count that misses the bulk of tool
    traffic. Counters that sum ``len(encode(message["content"]))`` (the usual ``num_tokens_from_messages``
    recipe applied to messages with ``tool_calls``, where the arguments live outside ``content``)."""

    name = "blind-bug-count-no-arguments"

    def count(self, params: Params) -> Params:
        messages = copy.deepcopy(params.get("messages") or [])
        for message in messages:
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            for call in calls if isinstance(calls, list) else []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and "arguments" in function:
                    function["arguments"] = ""
        return super().count({**params, "messages": messages})


class PartialUndeclared(KeepSystemNewest):
    """§10.2 (``cut-undeclared``): when the next older message does not fit whole, the tail of its
    text is kept, while the target declares ``trimPartial=no``. LangChain ``trim_messages(...,
    allow_partial=True)`` behind a wrapper whose declaration was not updated."""

    name = "blind-bug-partial-undeclared"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = budget_of(params)
        if budget is None or self.fits(messages, budget):
            return {"messages": list(messages)}
        floor = self.floor(messages)
        gs = groups(messages)
        for k in range(len(gs) + 1):
            keep = floor | indices_of(g for g in gs[k:] if g.kind != "orphan")
            out = pick(messages, keep)
            if out and self.fits(out, budget):
                break
        else:
            return self.nothing_fits(messages, budget)
        if k == 0:
            return {"messages": out}
        g = gs[k - 1]
        text = messages[g.start].get("content")
        if g.kind not in ("user", "other") or g.start in floor or not isinstance(text, str) or len(text) < 2:
            return {"messages": out}
        ordered = sorted(keep | {g.start})
        position = ordered.index(g.start)

        def attempt(n: int) -> list[Msg]:
            cut = pick(messages, ordered)
            cut[position] = {**messages[g.start], "content": text[len(text) - n:]}
            return cut

        lo, hi, best = 1, len(text) - 1, 0
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.fits(attempt(mid), budget):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        return {"messages": attempt(best) if best else out}


class HoistsSystem(KeepSystemNewest):
    """§10.2 (``moved``): when it trims, the answer is rebuilt as ``[*system messages, *rest]``,
    hoisting a system message from the middle of the history to the front. The
    ``[system_message] + trimmed_history`` rebuild most agent loops (and LangChain's
    ``include_system`` handling of a system message that is not first) do."""

    name = "blind-bug-hoists-system"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        reply = super().trim(params)
        out = reply.get("messages")
        if out is None or out == messages:
            return reply
        return {"messages": [m for m in out if is_system(m)] + [m for m in out if not is_system(m)]}


class EvictOnce(ChatTrimmer):
    """§10.6 (``not-idempotent``): a pruner without budget that, when the history holds more than
    four non-system messages, evicts the oldest turn once per call instead of until the window
    holds four: trimming its answer again evicts another turn. A memory buffer's
    ``if len(history) > k: evict_oldest_exchange()`` (one eviction per append) reused as a
    request-time trimmer."""

    name = "blind-bug-evict-once"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "none"}
    limit = 4

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        rest = [i for i, m in enumerate(messages) if not is_system(m)]
        if len(rest) <= self.limit:
            return {"messages": list(messages)}
        first = rest[0]
        following = next((i for i, m in enumerate(messages) if i > first and is_user(m)), None)
        if following is None:
            return {"messages": list(messages)}
        drop = {i for i in range(first, following) if not is_system(messages[i])}
        return {"messages": pick(messages, set(range(len(messages))) - drop)}


class PrefixKeeper(ChatTrimmer):
    """§10.5 (``last-user-dropped``): keeps the oldest groups that fit and drops the newest, the
    last user message with them, while declaring ``trimLastUser=keep``. LangChain
    ``trim_messages(strategy="first")`` (the choice for "keep the instructions and the start of the
    task") behind a wrapper that promises the current question is always sent."""

    name = "blind-bug-prefix-keeper"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        gs = [g for g in groups(messages) if g.kind != "orphan"]
        for k in range(len(gs), 0, -1):
            yield indices_of(gs[:k])
        yield self.floor(messages)


class NoFudge(KeepSystemNewest):
    """§10.3 (``over-budget``): candidates are measured without the 1.5 fudge its own ``count``
    applies (two thirds of the count, the raw tiktoken figure), so an answer may be up to half as
    large again as ``maxTokens``. A trimmer that counts with raw tiktoken while the request
    budget is measured by the agent's fudged counter (Roo-Code's ``countTokens`` fudge)."""

    name = "blind-bug-no-fudge"

    def fits(self, messages: list[Msg], budget: int) -> bool:
        return self.tokens(messages) * 2 // 3 <= budget


class EmptyWhenNothingFits(ChatTrimmer):
    """§10.1 (``emptied``): the newest groups that fit, and when not even the last one fits, an
    empty list (floor empty: ``trimSystem=any``, ``trimLastUser=any``, so the error would have been
    allowed). LangChain ``trim_messages``, which returns ``[]`` when no message fits."""

    name = "blind-bug-empty-when-nothing-fits"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        return self.newest_groups(messages, set())

    def nothing_fits(self, messages: list[Msg], budget: int) -> Params:
        return {"messages": []}


class StripsOldToolCalls(ChatTrimmer):
    """§10.2 (``invented``): a pruner without budget that removes tool traffic before the last user
    message by deleting ``tool_calls`` from the assistant messages (keeping their text) and their
    tool messages; an assistant message left with no text is dropped. Vercel AI SDK
    ``pruneMessages({toolCalls: "before-last-message", emptyMessages: "remove"})``: the edited
    assistant message is a message the input never had."""

    name = "blind-bug-strips-old-tool-calls"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "none"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        lu = last_user(messages)
        if lu is None:
            return {"messages": list(messages)}
        out: list[Msg] = []
        for i, message in enumerate(messages):
            if i < lu and is_tool(message):
                continue
            if i < lu and has_calls(message):
                stripped = {k: v for k, v in message.items() if k != "tool_calls"}
                if stripped.get("content") in (None, "", []):
                    continue
                out.append(stripped)
                continue
            out.append(message)
        return {"messages": out}


class GivesUpEarly(ChatTrimmer):
    """§10.3 (``gave-up``): whole turns dropped oldest first, system messages kept in place; when the
    last turn (its user message and the tool traffic after it) does not fit, the controlled error,
    although the floor (the system messages and the last user message) would. AutoGen-style
    "the latest exchange alone exceeds the limit" errors, declared with ``trimLastUser=keep``."""

    name = "blind-bug-gives-up-early"

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        systems = {i for i, m in enumerate(messages) if is_system(m)}
        gs = [g for g in groups(messages) if g.kind != "orphan"]
        for start in [i for i, m in enumerate(messages) if is_user(m)]:
            yield systems | indices_of(g for g in gs if g.start >= start)


__all__ = ["CountNoArguments", "DropsSystem", "EmptyWhenNothingFits", "EvictOnce", "GivesUpEarly",
           "HoistsSystem", "Mutates", "NoFudge", "ParallelHalf", "PartialUndeclared", "PrefixKeeper",
           "StripsOldToolCalls", "ToolFirstSuffix", "Untrimmed"]
