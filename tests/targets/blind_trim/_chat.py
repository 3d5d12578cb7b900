"""Helpers for the blind trim targets: the Chat Completions message shapes of domain §5.5.

A *group* is the unit a trimmer may keep or drop without touching pairing: an assistant message
with ``tool_calls`` together with the unbroken run of ``tool`` messages right after it, or any
other single message. A ``tool`` message outside such a run is an *orphan* group; the trimmers
here drop orphans whenever they trim (dropping one never creates a violation, keeping one after
a different neighbour could attach it to another call's run).

An ordered union of whole non-orphan groups has exactly the input's run for every kept call
message (its run is kept whole and the next kept message is never a ``tool``), so it brings no
pairing violation of §10.1 the input did not have.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref

Params = dict[str, Any]
Msg = dict[str, Any]

#: The ops every blind target offers (contract §7: an ``openai-chat`` target offers trim and count only).
OPS: list[str] = ["describe", "trim", "count"]


def is_system(message: Msg) -> bool:
    return message.get("role") in ("system", "developer")


def is_tool(message: Msg) -> bool:
    return message.get("role") == "tool"


def is_user(message: Msg) -> bool:
    return message.get("role") == "user"


def has_calls(message: Msg) -> bool:
    calls = message.get("tool_calls")
    return message.get("role") == "assistant" and isinstance(calls, list) and len(calls) > 0


def last_user(messages: list[Msg]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if is_user(messages[i]):
            return i
    return None


@dataclass(frozen=True)
class Group:
    indices: tuple[int, ...]
    kind: str  # "calls", "orphan", "system", "user" or "other"

    @property
    def start(self) -> int:
        return self.indices[0]


def groups(messages: list[Msg]) -> list[Group]:
    out: list[Group] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if has_calls(message):
            j = i + 1
            while j < len(messages) and is_tool(messages[j]):
                j += 1
            out.append(Group(tuple(range(i, j)), "calls"))
            i = j
            continue
        if is_tool(message):
            kind = "orphan"
        elif is_system(message):
            kind = "system"
        elif is_user(message):
            kind = "user"
        else:
            kind = "other"
        out.append(Group((i,), kind))
        i += 1
    return out


def indices_of(chosen: Iterable[Group]) -> set[int]:
    return {i for g in chosen for i in g.indices}


def pick(messages: list[Msg], keep: Iterable[int]) -> list[Msg]:
    return [messages[i] for i in sorted(set(keep))]


def budget_of(params: Params) -> int | None:
    budget = params.get("maxTokens")
    return budget if isinstance(budget, int) and not isinstance(budget, bool) else None


class ChatTrimmer:
    """The shape every blind target shares: ``describe``, ``count`` and a ``trim`` that returns the
    input when it fits and otherwise the first fitting candidate that ``candidates`` proposes."""

    name: ClassVar[str] = "blind-trim"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "keep", "trimLastUser": "keep",
                                          "trimPartial": "no", "trimBudget": "tokens"}

    def describe(self, params: Params) -> Params:
        return {"protocol": 1, "name": self.name, "version": "1", "ops": list(OPS), "tokenizer": "zoo",
                "dialect": "openai-chat", "policies": dict(self.policies)}

    def count(self, params: Params) -> Params:
        return ref.op_chat_count(params)

    def tokens(self, messages: list[Msg]) -> int:
        tokens: int = self.count({"messages": messages})["tokens"]
        return tokens

    def fits(self, messages: list[Msg], budget: int) -> bool:
        """How the trimmer measures a candidate (its own ``count``, unless a variant says otherwise)."""
        return self.tokens(messages) <= budget

    # -- the default shape of trim ------------------------------------------------------------

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = budget_of(params)
        if budget is None or self.fits(messages, budget):
            return {"messages": list(messages)}
        found = self.first_fit(messages, budget, self.candidates(messages))
        if found is not None:
            return {"messages": found}
        return self.nothing_fits(messages, budget)

    def candidates(self, messages: list[Msg]) -> Iterable[set[int]]:
        return ()

    def first_fit(self, messages: list[Msg], budget: int, candidates: Iterable[set[int]]) -> list[Msg] | None:
        for keep in candidates:
            out = pick(messages, keep)
            if out and self.fits(out, budget):
                return out
        return None

    def nothing_fits(self, messages: list[Msg], budget: int) -> Params:
        return {"error": f"cannot trim to {budget} tokens"}

    # -- floors -------------------------------------------------------------------------------

    def floor(self, messages: list[Msg]) -> set[int]:
        """The messages the declared policies require an answer to keep (contract §10 Terms)."""
        keep: set[int] = set()
        system = self.policies.get("trimSystem", "keep")
        if system == "keep":
            keep |= {i for i, m in enumerate(messages) if is_system(m)}
        elif system == "first" and messages and is_system(messages[0]):
            keep.add(0)
        if self.policies.get("trimLastUser", "keep") == "keep":
            lu = last_user(messages)
            if lu is not None:
                keep.add(lu)
        return keep

    def newest_groups(self, messages: list[Msg], floor: set[int]) -> Iterable[set[int]]:
        """The floor plus the newest non-orphan groups: every suffix of groups, longest first."""
        gs = groups(messages)
        for k in range(len(gs) + 1):
            yield floor | indices_of(g for g in gs[k:] if g.kind != "orphan")


Counter = Callable[[list[Msg]], int]
