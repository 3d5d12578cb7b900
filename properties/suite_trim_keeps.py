"""What a trimmer must keep, and what its options say it removes (contract §10.9, §10.10).

``suite_trim`` judges what a trimmer must not do; a trimmer that returns only the system message
whenever it is over budget, or a pruner told to prune that prunes nothing, passes all of it. These
two properties are the positive side. A trimmer that keeps the newest messages (the declared
``trimKeep``, ``newest`` by default) returns the whole last turn whenever that turn fits with what
its policies keep, by its own count and without a pairing violation its input did not have; one
that keeps the oldest returns the first turn so. A pruner's declared options (``pruneCalls``,
``pruneReasoning``, the Vercel AI SDK's ``pruneMessages`` vocabulary) are honoured both ways: every
call and every reasoning they remove is gone from the answer, and a message they leave alone is
returned unchanged.

Both read the answer with the properties' own JSON reading (``chat_yardsticks``), never the
reference's trimmer, and count with the target's own ``count``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ctxmodel.policies import PATTERNS
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check
from ctxmodel.properties.chat_yardsticks import (
    CHAT,
    floor,
    is_less_reasoning_of,
    is_partial_of,
    is_pruned_of,
    match_in_order,
    reasoning_of,
    violations,
)
from ctxmodel.properties.converse_yardsticks import CONVERSE, holds_results
from ctxmodel.properties.gemini_yardsticks import GEMINI, holds_responses
from ctxmodel.properties.json_reading import canon, short
from ctxmodel.properties.responses_yardsticks import RESPONSES, is_message_item, separations
from ctxmodel.properties.suite_trim import returned

Msg = dict[str, Any]

#: The broken trimmers of these clauses (``tests/targets/broken_trim.py``), one bug each.
_B = "python:tests.targets.broken_trim"


def _dialect(probe: Probe) -> str:
    return str(probe.policies.get("dialect", "anthropic"))


def _is_prompt(message: Msg, dialect: str) -> bool:
    """A user message that starts a turn (contract §10 terms): in Anthropic one without results."""
    if message.get("role") != "user" or (dialect == RESPONSES and not is_message_item(message)):
        return False
    content = message.get("content")
    if dialect == CONVERSE:
        return not holds_results(message)
    if dialect == GEMINI:
        return not holds_responses(message)
    return dialect in (CHAT, RESPONSES) or not (
        isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content))


def kept_end(history: Sequence[Msg], dialect: str, keep: str) -> list[int]:
    """The turn at the end a trimmer keeps (§10.9): under ``newest`` from the last user message to
    the end, under ``oldest`` from the first message to the next turn's user message (the whole
    history when there is no second turn)."""
    prompts = [i for i, m in enumerate(history) if _is_prompt(m, dialect)]
    if keep == "oldest":
        end = next((i for i in prompts if i > 0), len(history))
        return list(range(end))
    return list(range(prompts[-1] if prompts else 0, len(history)))


def _count(probe: Probe, messages: list[Msg], params: Mapping[str, Any]) -> int | None:
    request: dict[str, Any] = {"messages": messages}
    if _dialect(probe) in ("anthropic", CONVERSE, GEMINI) and isinstance(params.get("systemPrompt"), str):
        request["systemPrompt"] = params["systemPrompt"]
    tokens = probe.call("count", request).get("tokens")
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


def _kept_as_declared(probe: Probe, dialect: str) -> Callable[[Msg, Msg], bool]:
    """Whether a returned message stands for an input one in a form the declared policies allow:
    itself, a partial (``trimPartial=yes``), less some calls (``trimToolCalls=pairs``), less its
    reasoning (``trimReasoning=strip``)."""
    partial = probe.policies.get("trimPartial", "no") == "yes"
    pruned = probe.policies.get("trimToolCalls", "keep") == "pairs"
    strip = probe.policies.get("trimReasoning", "keep") == "strip"

    def declared(m: Mapping[str, Any], original: Mapping[str, Any]) -> bool:
        return (partial and is_partial_of(dict(m), dict(original))) or (
            pruned and is_pruned_of(dict(m), dict(original)))

    def relation(m: Msg, original: Msg) -> bool:
        return canon(m) == canon(original) or declared(m, original) or (
            strip and is_less_reasoning_of(m, original, dialect, declared))

    return relation


@check(
    "trim.keeps-what-fits",
    op="trim",
    clause="contract §10.9",
    summary="With a budget, when the turn at the end the target keeps (the last turn under trimKeep=newest, the "
    "first under oldest) fits with the floor by the target's own count, every message of it is returned.",
    policies=("trimKeep", "trimBudget", "trimSystem", "trimLastUser", "trimPartial", "trimToolCalls",
              "trimReasoning"),
    requires=("trim", "count"),
    witnesses=(Witness(f"{_B}:ReturnsOnlyTheFloor", "kept-too-little"),
               Witness(f"{_B}:KeepsTheNewestDeclaringOldest", "kept-too-little")),
)
def keeps_what_fits(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    keep = probe.policies.get("trimKeep", "newest")
    budget = ex.params.get("maxTokens")
    out = returned(probe, ex)
    if out is None or keep == "any" or not isinstance(budget, int) or isinstance(budget, bool):
        return
    dialect = _dialect(probe)
    history: list[Msg] = ex.params["messages"]
    turn = kept_end(history, dialect, keep)
    if dialect == RESPONSES and probe.policies.get("trimReasoning", "keep") == "strip":
        # a reasoning item may go with its item kept (§10.8): the turn's other items must stay
        turn = [i for i in turn if history[i].get("type") != "reasoning"]
    broken = {tool_id for _, tool_id in violations(history, dialect)}
    if not turn or any(set(_ids(history[i], dialect)) & broken for i in turn):
        return  # a turn holding a pair the input already broke: what to keep of it is the trimmer's repair
    wanted = sorted(set(floor(history, dialect, probe.policies)) | set(turn))
    candidate = [history[i] for i in wanted]
    new = violations(candidate, dialect) - violations(history, dialect)
    if dialect == RESPONSES:
        new += separations(candidate, history)
    if new:
        return  # that turn alone is no answer the contract accepts
    tokens = _count(probe, candidate, ex.params)
    if tokens is None or tokens > budget:
        return
    relation = _kept_as_declared(probe, dialect)
    at = 0
    for i in turn:
        while at < len(out) and not relation(out[at], history[i]):
            at += 1
        if at == len(out):
            which = "last" if keep == "newest" else "first"
            yield Finding.fail(
                f"messages.{i} of the input ({short(history[i], 80)}) is not in the answer, though the {which} turn "
                f"(messages.{turn[0]}-{turn[-1]}) with the floor counts {tokens} of the {budget} tokens by the "
                f"target's own count; the answer has {len(out)} message{'s' if len(out) != 1 else ''}",
                f"trimKeep={keep}: the {which} turn is kept whenever it fits (§10.9)", code="kept-too-little",
            )
            return
        at += 1


def _ids(message: Msg, dialect: str) -> list[str]:
    """The tool ids a message calls or answers: Chat ``tool_calls`` and a ``tool`` message's
    ``tool_call_id``; Anthropic ``tool_use`` and ``tool_result`` blocks; a Responses item's ``call_id``."""
    if dialect == RESPONSES:
        return [str(message["call_id"])] if "call_id" in message else []
    if dialect == CHAT:
        if message.get("role") == "tool":
            return [str(message.get("tool_call_id"))]
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        return [str(c.get("id")) for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [str(b.get("id") if b.get("type") == "tool_use" else b.get("tool_use_id")) for b in content
            if isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result")]


def kept_last(option: str) -> int | None:
    """How many messages at the end an option leaves alone: ``None`` for ``no``, 0 for ``all``."""
    if option == "no":
        return None
    if option == "all":
        return 0
    if option == "before-last-message":
        return 1
    for pattern in PATTERNS.get("pruneCalls", {}).values():
        matched = pattern.fullmatch(option)
        if matched:
            return int(matched.group(1))
    raise ValueError(f"unknown prune option {option!r}")


def removed_ids(history: Sequence[Msg], dialect: str, option: str) -> set[str]:
    """The tool ids ``pruneCalls`` removes (§10.10): every id called or answered before the last N
    messages that the last N messages do not call or answer (all of them under ``all``)."""
    n = kept_last(option)
    if n is None:
        return set()
    cut = max(0, len(history) - n)
    kept = {x for m in history[cut:] for x in _ids(m, dialect)}
    return {x for m in history[:cut] for x in _ids(m, dialect)} - kept


def _empty(message: Msg, dialect: str) -> bool:
    """A message with nothing to send (no content, no calls, no reasoning), which a pruner may drop."""
    return not message.get("content") and not _ids(message, dialect) and not message.get("tool_calls") and not (
        reasoning_of(message, dialect))


@check(
    "trim.honours-options",
    op="trim",
    clause="contract §10.10",
    summary="A pruner's declared options are honoured: every call (with its results) and every reasoning that "
    "pruneCalls and pruneReasoning remove is gone from the answer, and without a budget every message they leave "
    "alone is returned unchanged.",
    policies=("pruneCalls", "pruneReasoning", "trimBudget", "trimPartial", "trimToolCalls"),
    witnesses=(Witness(f"{_B}:PrunesNothing", "not-pruned"),
               Witness(f"{_B}:KeepsReasoningItSaysItPrunes", "not-pruned"),
               Witness(f"{_B}:PrunesTheLastCallsToo", "over-pruned")),
)
def honours_options(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    calls = probe.policies.get("pruneCalls", "no")
    reasoning = probe.policies.get("pruneReasoning", "no")
    dialect = _dialect(probe)
    out = returned(probe, ex)
    if out is None or (calls == "no" and reasoning == "no") or dialect == RESPONSES:
        return
    history: list[Msg] = ex.params["messages"]
    removed = removed_ids(history, dialect, calls)
    for j, message in enumerate(out):
        left = [x for x in _ids(message, dialect) if x in removed]
        if left:
            yield Finding.fail(f"messages.{j} of the answer ({short(message, 80)}) still holds tool id {left[0]!r}, "
                               f"which pruneCalls={calls} removes",
                               "what a declared option removes is gone (§10.10)", code="not-pruned")
            return
    last = len(history) - 1

    def strips(i: int) -> bool:
        return reasoning == "all" or (reasoning == "before-last-message" and i < last)

    matched, _, _ = match_in_order(out, history, probe.policies.get("trimPartial", "no") == "yes",
                                   probe.policies.get("trimToolCalls", "keep") == "pairs", reasoning=dialect)
    if matched is None:
        return  # not the input's messages in order (or a placeholder among them): trim.keeps-order's to judge
    by_input = dict(zip(matched, out, strict=True))
    for i, message in by_input.items():
        if strips(i) and reasoning_of(message, dialect):
            yield Finding.fail(f"messages.{i} of the input is returned with its reasoning, which "
                               f"pruneReasoning={reasoning} removes",
                               "what a declared option removes is gone (§10.10)", code="not-pruned")
            return
    if probe.policies.get("trimBudget", "tokens") != "none":
        return  # with a budget, more may go to fit it
    for i, original in enumerate(history):
        if _empty(original, dialect) or any(x in removed for x in _ids(original, dialect)) or (
                strips(i) and reasoning_of(original, dialect)):
            continue
        kept = by_input.get(i)
        if kept is None or canon(kept) != canon(original):
            said = "is missing from the answer" if kept is None else f"is returned changed ({short(kept, 80)})"
            yield Finding.fail(
                f"messages.{i} of the input ({short(original, 80)}) holds nothing pruneCalls={calls} and "
                f"pruneReasoning={reasoning} remove, and {said}",
                "a pruner removes what its options say, and only that (§10.10)", code="over-pruned",
            )
            return
