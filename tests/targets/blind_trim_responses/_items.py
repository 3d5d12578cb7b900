"""Helpers for the blind Responses trim targets: the ``input`` item shapes of domain §5.7.

A *step* is the unit a trimmer may keep or drop without touching pairing or reasoning. Steps are
the classes of a union of these bindings:

- a ``reasoning`` item and the item right after it, whatever that item is (the API binds them by
  adjacency, and an item with an ``id`` is checked against its reasoning both ways, §10.1);
- consecutive ``function_call`` items (one turn's parallel calls);
- a ``function_call_output`` and every earlier ``function_call`` with its ``call_id`` (outputs may
  come anywhere later, and a second output goes with the first).

A step may therefore be non-contiguous (a call's output several items later). Dropping a whole
step never breaks a binding of an item outside it, since every binding is inside one class; and
keeping a whole step keeps each reasoning item right before the item that followed it in the
input, because nothing lies between two adjacent items. So an ordered union of whole steps adds no
§10.1 violation the input did not have and strips no reasoning (§10.8).

An *orphan* step holds a ``function_call_output`` that no earlier call answers; the trimmers here
drop orphans whenever they trim (dropping one breaks nothing, keeping one is only ever the input's
own violation).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref

Params = dict[str, Any]
Item = dict[str, Any]

#: The ops every blind target offers (contract §7: an ``openai-responses`` target offers trim and count only).
OPS: list[str] = ["describe", "trim", "count"]

#: The default policies every blind Responses target declares unless it says otherwise.
DEFAULT_POLICIES: dict[str, str] = {"trimSystem": "keep", "trimLastUser": "keep", "trimPartial": "no",
                                    "trimBudget": "tokens", "trimReasoning": "keep",
                                    "reasoningRequired": "no"}


def item_type(item: Any) -> str:
    """An item without ``type`` is the SDK's "easy input message" (domain §5.7), so it is a message."""
    if not isinstance(item, dict):
        return ""
    kind = item.get("type", "message")
    return kind if isinstance(kind, str) else ""


def is_message(item: Any) -> bool:
    return item_type(item) == "message"


def is_user(item: Any) -> bool:
    return is_message(item) and item.get("role") == "user"


def is_system(item: Any) -> bool:
    return is_message(item) and item.get("role") in ("system", "developer")


def is_assistant_message(item: Any) -> bool:
    return is_message(item) and item.get("role") == "assistant"


def is_reasoning(item: Any) -> bool:
    return item_type(item) == "reasoning"


def is_call(item: Any) -> bool:
    return item_type(item) == "function_call"


def is_output(item: Any) -> bool:
    return item_type(item) == "function_call_output"


def has_id(item: Any) -> bool:
    """Any ``id`` key counts: an item the server might look up must keep its reasoning, so when in
    doubt (an empty or null id) the reasoning is kept rather than stripped."""
    return isinstance(item, dict) and "id" in item


def call_id(item: Any) -> Any:
    return item.get("call_id") if isinstance(item, dict) else None


def last_user(items: list[Item]) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        if is_user(items[i]):
            return i
    return None


def user_starts(items: list[Item]) -> list[int]:
    return [i for i, item in enumerate(items) if is_user(item)]


@dataclass(frozen=True)
class Step:
    indices: tuple[int, ...]
    kind: str  # "orphan", "calls", "system", "user", "reasoning" or "other"

    @property
    def start(self) -> int:
        return self.indices[0]


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def orphan_outputs(items: list[Item]) -> set[int]:
    """Outputs whose ``call_id`` no earlier ``function_call`` has."""
    seen: set[Any] = set()
    out: set[int] = set()
    for i, item in enumerate(items):
        if is_call(item):
            seen.add(_key(call_id(item)))
        elif is_output(item) and _key(call_id(item)) not in seen:
            out.add(i)
    return out


def _key(value: Any) -> Any:
    """A hashable stand-in for a ``call_id`` (the harness may draw odd values)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def steps(items: list[Item], *, bind_reasoning: bool = True, bind_outputs: bool = True) -> list[Step]:
    """The steps of ``items``, ordered by their first item. The keyword switches exist for the bug
    variants, which each forget one binding."""
    n = len(items)
    union = _Union(n)
    calls_by_id: dict[Any, list[int]] = {}
    for i, item in enumerate(items):
        if bind_reasoning and is_reasoning(item) and i + 1 < n:
            union.join(i, i + 1)
        if is_call(item):
            if i + 1 < n and is_call(items[i + 1]):
                union.join(i, i + 1)
            calls_by_id.setdefault(_key(call_id(item)), []).append(i)
        elif is_output(item) and bind_outputs:
            for j in calls_by_id.get(_key(call_id(item)), []):
                union.join(i, j)
    classes: dict[int, list[int]] = {}
    for i in range(n):
        classes.setdefault(union.find(i), []).append(i)
    orphans = orphan_outputs(items)
    out: list[Step] = []
    for members in sorted(classes.values()):
        out.append(Step(tuple(members), _kind(items, members, orphans)))
    return out


def _kind(items: list[Item], members: list[int], orphans: set[int]) -> str:
    if any(i in orphans for i in members):
        return "orphan"
    if any(is_call(items[i]) for i in members):
        return "calls"
    if any(is_system(items[i]) for i in members):
        return "system"
    if any(is_user(items[i]) for i in members):
        return "user"
    if all(is_reasoning(items[i]) for i in members):
        return "reasoning"
    return "other"


def indices_of(chosen: Iterable[Step]) -> set[int]:
    return {i for s in chosen for i in s.indices}


def close(indices: set[int], all_steps: list[Step]) -> set[int]:
    """``indices`` widened to the whole steps they touch."""
    return indices_of(s for s in all_steps if set(s.indices) & indices)


def pick(items: list[Item], keep: Iterable[int]) -> list[Item]:
    return [items[i] for i in sorted(set(keep))]


def budget_of(params: Params) -> int | None:
    budget = params.get("maxTokens")
    return budget if isinstance(budget, int) and not isinstance(budget, bool) else None


def strippable_reasoning(items: list[Item], *, before: int | None, only_idless: bool = True) -> set[int]:
    """The reasoning items a ``trimReasoning=strip`` trimmer may drop: every maximal run of
    reasoning items whose following item has no ``id`` (the server cannot tie such an item to its
    reasoning, domain §5.7), when that item lies before index ``before`` (``None``: anywhere).
    A run with no following item is left alone: it is the input's own dangling reasoning."""
    out: set[int] = set()
    i = 0
    n = len(items)
    while i < n:
        if not is_reasoning(items[i]):
            i += 1
            continue
        j = i
        while j < n and is_reasoning(items[j]):
            j += 1
        follower = j
        if follower < n and (before is None or follower < before) and (not only_idless or not has_id(items[follower])):
            out |= set(range(i, j))
        i = j
    return out


class ResponsesTrimmer:
    """The shape every blind Responses target shares: ``describe``, ``count`` and a ``trim`` that
    returns the input when it fits and otherwise the first fitting candidate ``candidates`` proposes."""

    name: ClassVar[str] = "blind-responses-trim"
    policies: ClassVar[dict[str, str]] = dict(DEFAULT_POLICIES)

    def describe(self, params: Params) -> Params:
        return {"protocol": 1, "name": self.name, "version": "1", "ops": list(OPS), "tokenizer": "zoo",
                "dialect": "openai-responses", "policies": dict(self.policies)}

    def count(self, params: Params) -> Params:
        result: Params = ref.op_responses_count(params)
        return result

    def tokens(self, items: list[Item]) -> int:
        tokens: int = self.count({"messages": items})["tokens"]
        return tokens

    def fits(self, items: list[Item], budget: int) -> bool:
        """How the trimmer measures a candidate (its own ``count``, unless a variant says otherwise)."""
        return self.tokens(items) <= budget

    def policy(self, key: str) -> str:
        return self.policies.get(key, DEFAULT_POLICIES[key])

    # -- the default shape of trim ------------------------------------------------------------

    def trim(self, params: Params) -> Params:
        items: list[Item] = params["messages"]
        budget = budget_of(params)
        if budget is None or self.fits(items, budget):
            return {"messages": list(items)}
        found = self.first_fit(items, budget, self.candidates(items))
        if found is not None:
            return {"messages": found}
        return self.nothing_fits(items, budget)

    def candidates(self, items: list[Item]) -> Iterable[set[int]]:
        return ()

    def first_fit(self, items: list[Item], budget: int, candidates: Iterable[set[int]]) -> list[Item] | None:
        for keep in candidates:
            out = pick(items, keep)
            if out and self.fits(out, budget):
                return out
        return None

    def nothing_fits(self, items: list[Item], budget: int) -> Params:
        floor = pick(items, self.floor(items))
        return {"error": f"cannot trim to {budget} tokens: the messages the policies keep count "
                         f"{self.tokens(floor) if floor else 0}"}

    # -- floors -------------------------------------------------------------------------------

    def floor_items(self, items: list[Item]) -> set[int]:
        """The items the declared policies require an answer to keep (contract §10 Terms)."""
        keep: set[int] = set()
        system = self.policy("trimSystem")
        if system == "keep":
            keep |= {i for i, item in enumerate(items) if is_system(item)}
        elif system == "first" and items and is_system(items[0]):
            keep.add(0)
        if self.policy("trimLastUser") == "keep":
            lu = last_user(items)
            if lu is not None:
                keep.add(lu)
        return keep

    def floor(self, items: list[Item]) -> set[int]:
        """The floor widened to whole steps: a floor message the input had after a reasoning item
        keeps that item (§10.8 under ``trimReasoning=keep``)."""
        return close(self.floor_items(items), steps(items))

    def newest_steps(self, items: list[Item], floor: set[int], all_steps: list[Step] | None = None
                     ) -> Iterable[set[int]]:
        """The floor plus the newest non-orphan steps: every suffix of steps, longest first."""
        ss = steps(items) if all_steps is None else all_steps
        for k in range(len(ss) + 1):
            yield floor | indices_of(s for s in ss[k:] if s.kind != "orphan")
