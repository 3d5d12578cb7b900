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
    return bool(item.get("type", "message") == "message")


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


def _reasoning_before(history: Sequence[Item]) -> dict[int, int]:
    """For each input item a reasoning item came right before (and produced), that reasoning item's index."""
    return {n + 1: n for n in range(len(history) - 1)
            if _kind(history[n]) == "reasoning" and _produced(history[n + 1])}


def _candidates(history: Sequence[Item]) -> dict[str, list[int]]:
    where: dict[str, list[int]] = {}
    for n, item in enumerate(history):
        where.setdefault(canon(item), []).append(n)
    return where


def _without_reasoning(output: Sequence[Item], history: Sequence[Item]) -> list[tuple[int, int, int]]:
    """``(answer index, input index, reasoning index)`` of each returned item that is, whichever input
    item equal to it it is taken for, one a reasoning item came before in the input and that is not
    returned right after that reasoning item. An item equal to one without reasoning before it is
    taken for that one: a judge reads the answer in the way that breaks nothing, never guesses."""
    before = _reasoning_before(history)
    where = _candidates(history)
    out: list[tuple[int, int, int]] = []
    for j, item in enumerate(output):
        if _kind(item) == "reasoning":
            continue
        found = where.get(canon(item), [])
        if not found or any(i not in before for i in found):
            continue
        previous = canon(output[j - 1]) if j > 0 else None
        if any(previous == canon(history[before[i]]) for i in found):
            continue
        out.append((j, found[0], before[found[0]]))
    return out


def _reasoning_alone(output: Sequence[Item], history: Sequence[Item]) -> list[tuple[int, int, int]]:
    """``(answer index, reasoning index, item index)`` of each returned reasoning item that is, whichever
    input reasoning item equal to it it is taken for, one whose following input item has an ``id`` and
    is not returned right after it."""
    before = _reasoning_before(history)
    bound = {r: f for f, r in before.items()}
    where = _candidates(history)
    out: list[tuple[int, int, int]] = []
    for k, item in enumerate(output):
        if _kind(item) != "reasoning":
            continue
        found = where.get(canon(item), [])
        if not found or any(r not in bound or not isinstance(history[bound[r]].get("id"), str) for r in found):
            continue
        following = canon(output[k + 1]) if k + 1 < len(output) else None
        if any(following == canon(history[bound[r]]) for r in found):
            continue
        out.append((k, found[0], bound[found[0]]))
    return out


def separations(output: Sequence[Item], history: Sequence[Item]) -> Counter[tuple[str, str]]:
    """§10.1's two comparison rules: an item with an ``id`` that followed a reasoning item in the input,
    and that reasoning item, returned one without the other (by the item's id)."""
    out: Counter[tuple[str, str]] = Counter()
    for _, _, f in _reasoning_alone(output, history):
        out[("reasoning-without-its-item", str(history[f].get("id")))] += 1
    for j, i, _ in _without_reasoning(output, history):
        if isinstance(output[j].get("id"), str):
            out[("item-without-its-reasoning", str(history[i]["id"]))] += 1
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
    turn_starts = -1 if last_user is None else last_user  # no user message: the whole history is the turn
    codes: set[str] = {code for code, _ in found}
    for j, f, r in _without_reasoning(output, history):
        what = (f"input.{j} of the answer ({_kind(output[j])}, input.{f} of the input) is returned without the "
                f"reasoning item input.{r} that came right before it")
        if current and f > turn_starts and "current-reasoning-stripped" not in codes:
            found.append(("current-reasoning-stripped", what + ", in the turn being answered"))
            codes.add("current-reasoning-stripped")
        elif not strip and "reasoning-stripped" not in codes:
            found.append(("reasoning-stripped", what + ", and the target declares trimReasoning=keep"))
            codes.add("reasoning-stripped")
    return found
