"""The yardsticks of ``trim`` on OpenAI Responses items (contract §10.1, §10.8), restated from the contract.

Read from domain §5.7's rules and the contract's words, not from the dialect module that judges
files (``ctxmodel.dialects.openai_responses``) nor from the reference trimmer (``ctxmodel.trimming``):
a judge that shared their reading would be blind to their bugs.

Pairing (§10.1) is counted by rule and id, so an answer is compared with its input: a call no later
output answers, an output no earlier call has, a second output for a call, a reasoning item not
followed by an item the model produced. Two rules only the comparison can see: a reasoning item
returned without the item (with an ``id``) that followed it in the input, and such an item returned
without its reasoning item. Reasoning (§10.8) is compared item by item: a reasoning item returned
is the input's, unchanged; under ``trimReasoning=keep`` an item returned that followed a reasoning
item in the input comes right after it; under ``strip`` the reasoning of an item with an ``id``, and
under ``reasoningRequired=current-turn`` of an item after the last user message, stays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ctxmodel.properties.json_reading import canon

__all__ = [
    "RESPONSES",
    "is_message_item",
    "reasoning_findings",
    "responses_pairing_violations",
    "separations",
]

Item = Mapping[str, Any]

#: The Responses dialect's name (contract §7 ``dialect``).
RESPONSES = "openai-responses"


def is_message_item(item: Item) -> bool:
    """A ``message`` item: its ``type`` says so, or it has none (the easy input message)."""
    return item.get("type", "message") == "message"


def _kind(item: Item) -> Any:
    return item.get("type", "message")


def _produced(item: Item | None) -> bool:
    """What can follow a reasoning item (domain §5.7): not the end, a user, system or developer
    message, an output, or another reasoning item."""
    if item is None or _kind(item) in ("function_call_output", "reasoning"):
        return False
    return not (is_message_item(item) and item.get("role") != "assistant")


def responses_pairing_violations(items: Sequence[Item]) -> Counter[tuple[str, str]]:
    """Domain §5.7's rules read off one request, by rule and id."""
    out: Counter[tuple[str, str]] = Counter()
    called: set[str] = set()
    answered: set[str] = set()
    for n, item in enumerate(items):
        kind = _kind(item)
        if kind == "function_call":
            called.add(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in called:
                out[("orphan-output", call_id)] += 1
            elif call_id in answered:
                out[("second-output", call_id)] += 1
            answered.add(call_id)
        elif kind == "reasoning" and not _produced(items[n + 1] if n + 1 < len(items) else None):
            out[("reasoning-without-following-item", str(item.get("id")))] += 1
    for n, item in enumerate(items):
        if _kind(item) == "function_call":
            call_id = str(item.get("call_id"))
            later = any(_kind(o) == "function_call_output" and str(o.get("call_id")) == call_id for o in items[n + 1:])
            if not later:
                out[("unanswered-call", call_id)] += 1
    return out


def _bound(history: Sequence[Item]) -> list[tuple[int, int]]:
    """``(reasoning index, following index)`` for each reasoning item of the input and the item after it."""
    return [(n, n + 1) for n in range(len(history) - 1)
            if _kind(history[n]) == "reasoning" and _produced(history[n + 1])]


def _positions(output: Sequence[Item]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    for j, item in enumerate(output):
        where.setdefault(canon(item), []).append(j)
    return where


def separations(output: Sequence[Item], history: Sequence[Item]) -> Counter[tuple[str, str]]:
    """§10.1's two comparison rules: an item with an ``id`` that followed a reasoning item in the input,
    and that reasoning item, returned one without the other (by the item's id)."""
    out: Counter[tuple[str, str]] = Counter()
    where = _positions(output)
    for r, f in _bound(history):
        following = history[f]
        if not isinstance(following.get("id"), str):
            continue
        has_r, has_f = canon(history[r]) in where, canon(following) in where
        if has_r and not has_f:
            out[("reasoning-without-its-item", str(following["id"]))] += 1
        elif has_f and not has_r:
            out[("item-without-its-reasoning", str(following["id"]))] += 1
    return out


def _last_user(items: Sequence[Item]) -> int | None:
    for n in range(len(items) - 1, -1, -1):
        if is_message_item(items[n]) and items[n].get("role") == "user":
            return n
    return None


def reasoning_findings(output: Sequence[Item], history: Sequence[Item],
                       policies: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(code, what)`` for each way the answer breaks §10.8 on Responses items, the first of each code."""
    found: list[tuple[str, str]] = []
    held = {canon(item) for item in history if _kind(item) == "reasoning"}
    for j, item in enumerate(output):
        if _kind(item) == "reasoning" and canon(item) not in held:
            found.append(("reasoning-edited",
                          f"input.{j} of the answer is a reasoning item ({item.get('id')!r}) that is not one of the "
                          "input's, unchanged"))
            break
    strip = policies.get("trimReasoning", "keep") == "strip"
    current = policies.get("reasoningRequired", "no") == "current-turn"
    last_user = _last_user(history)
    where = _positions(output)
    codes: set[str] = {code for code, _ in found}
    for r, f in _bound(history):
        spots = where.get(canon(history[f]))
        if not spots:
            continue
        with_it = any(j > 0 and canon(output[j - 1]) == canon(history[r]) for j in spots)
        if with_it:
            continue
        what = (f"input.{f} of the input ({_kind(history[f])}) is returned without the reasoning item input.{r} "
                "that came right before it")
        if current and f > (-1 if last_user is None else last_user) and "current-reasoning-stripped" not in codes:
            found.append(("current-reasoning-stripped", what + ", in the turn being answered"))
            codes.add("current-reasoning-stripped")
        elif not strip and "reasoning-stripped" not in codes:
            found.append(("reasoning-stripped", what + ", and the target declares trimReasoning=keep"))
            codes.add("reasoning-stripped")
    return found
