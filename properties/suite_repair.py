"""Properties of ``repair`` (``ctxmodel repair``; contract §2, §3, §6).

A repair turns a stored history the API refuses into one the agent can load again: the request built
from it passes the oracle, its hidden messages (condensed, truncated) come back unchanged and still
hidden, a result that was valid is never moved to another call, and repairing again changes nothing.
Which messages a target changes, and how, is its own choice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check, declare_op
from ctxmodel.properties.json_reading import canon, first_difference, messages_of, plan_normalize, result_payload, short
from ctxmodel.properties.yardsticks import effective, visible_mask

Msg = dict[str, Any]


def _histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories

    return st.builds(lambda messages: {"messages": messages}, histories())


#: The broken repair targets (``tests/targets/broken_repair.py``), one bug each.
_REPAIR = "python:tests.targets.broken_repair"

declare_op("repair", params=_histories, purity_witnesses=(
    Witness(f"{_REPAIR}:RemembersRepairs", "answers-differently"),
    Witness(f"{_REPAIR}:MutatesInput", "mutates-input"),
))




@check(
    "repair.request-accepted",
    op="repair",
    clause="contract §6",
    summary="The request the target builds from the repaired history (its request, else its "
    "normalize of its effective) "
    "passes the API oracle.",
    witnesses=(Witness(f"{_REPAIR}:RepairsNothing", "empty-user-message"),),
)
def request_accepted(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    from ctxmodel.properties.wire import judged_request

    repaired = messages_of(ex.result, "repair")
    request = probe.request(repaired)
    violations = judged_request(ex.params["messages"], request)  # less what the caller brought (domain §5.6)
    if violations:
        first = violations[0]
        yield Finding.fail(
            f"the request built from the repaired history is rejected at {first.path}: {first.message}",
            "a repaired history whose request the API accepts (§6)",
            code=first.rule,
        )


@check(
    "repair.keeps-hidden",
    op="repair",
    clause="contract §2",
    summary="Every hidden message comes back unchanged, in order, and still hidden.",
    witnesses=(Witness(f"{_REPAIR}:WritesTheRequest", "hidden-lost"),),
)
def keeps_hidden(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history: list[Msg] = ex.params["messages"]
    repaired = messages_of(ex.result, "repair")
    hidden = [m for m, v in zip(history, visible_mask(history), strict=True) if not v]
    still = [m for m, v in zip(repaired, visible_mask(repaired), strict=True) if not v]
    keys = [canon(m) for m in still]
    k = 0
    for i, message in enumerate(hidden):
        key = canon(message)
        while k < len(keys) and keys[k] != key:
            k += 1
        if k == len(keys):
            yield Finding.fail(
                f"hidden message {i} of the input ({short(message, 100)}) is missing, changed or shown again",
                "hidden messages come back unchanged and still hidden (§2)",
                code="hidden-lost",
            )
            return
        k += 1


@check(
    "repair.valid-results-kept",
    op="repair",
    clause="contract §3.2",
    summary="A result that was valid in the request is still the result of its own call, content and "
    "is_error unchanged.",
    witnesses=(Witness(f"{_REPAIR}:RelabelsInOrder", "valid-result-lost"),),
)
def valid_results_kept(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    before = effective(ex.params["messages"])
    after = effective(messages_of(ex.result, "repair"))
    plan = plan_normalize(before)
    got: dict[str, set[str]] = {}
    for message in after:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                got.setdefault(str(block.get("tool_use_id")), set()).add(result_payload(block))
    for tool_id in plan.valid:
        if tool_id in plan.ambiguous:
            continue
        wanted = plan.payloads(tool_id, loose=False)
        if got.get(tool_id, set()) & wanted:
            continue
        if not _API_ID.fullmatch(tool_id) and any(
            got.get(other, set()) & wanted for other in _renamed(before, after, tool_id)
        ):
            continue  # an id the API refuses, renamed with its call: the result is still its call's
        yield Finding.fail(
            f"the valid result of {tool_id} is no longer the result of {tool_id} in the repaired request",
            "a valid result is never moved or edited (§3.2)",
            code="valid-result-lost",
        )
        return


#: The ids the API accepts (domain §5.1): a repair must rename the others, call and results together.
_API_ID = re.compile(r"[a-zA-Z0-9_-]+")


def _calls(messages: list[Msg]) -> list[tuple[str, str]]:
    """(id, the call without its id) of every ``tool_use``, in order."""
    out = []
    for message in messages:
        content = message.get("content") if message.get("role") == "assistant" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                out.append((str(block.get("id")), canon({k: v for k, v in block.items() if k != "id"})))
    return out


def _renamed(before: list[Msg], after: list[Msg], tool_id: str) -> list[str]:
    """The ids in ``after`` of calls identical to ``tool_id``'s call in ``before`` but for their id."""
    mine = {call for i, call in _calls(before) if i == tool_id}
    return [i for i, call in _calls(after) if call in mine and i != tool_id]


@check(
    "repair.idempotent",
    op="repair",
    clause="contract §3.7",
    summary="Repairing the repaired history changes nothing.",
    witnesses=(Witness(f"{_REPAIR}:NotIdempotent", ""),),
)
def idempotent(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    repaired = messages_of(ex.result, "repair")
    again = messages_of(probe.call("repair", {"messages": repaired}), "repair")
    if canon(again) != canon(repaired):
        where = first_difference(repaired, again, "messages") or "messages"
        yield Finding.fail(f"repairing again changed {where}", "repair(repair(H)) == repair(H)")
