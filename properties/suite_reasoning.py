"""Reasoning travels with its item (contract §10.8), judged on ``trim`` in the dialect the target declares.

A provider that reasons before a call wants that reasoning back, byte for byte, with the message it
came with (domain §5.8): a signature that changed, a thinking text that was cut, a
``reasoning_content`` dropped from the turn being answered is a 400 or a model that forgot why it
called. So every returned message that comes from an input message carries that message's
reasoning unchanged, or (only under ``trimReasoning=strip``) none of it; and under
``reasoningRequired=current-turn`` the assistant messages after the last user message keep theirs.

The answer is compared with the input by the properties' own JSON reading
(``chat_yardsticks``): each returned message is paired with the input message it comes from, the
reasoning of both set aside, and only then are the two reasonings compared. Which messages a
trimmer keeps is §10.2's; that a message stripped where it may not be is not invented is §10.2's
too (it matches it), and the finding is this property's. In ``openai-responses`` reasoning is an
item of its own, bound to the item after it: a reasoning item returned is one of the input's,
unchanged, and an item returned that followed one in the input comes right after it, where the
declared mode requires (``responses_yardsticks.reasoning_findings``); a reasoning item dropped with
its item is a dropped item, §10.2's and §10.1's to judge.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check
from ctxmodel.properties.chat_yardsticks import (
    CHAT,
    is_partial_of,
    is_pruned_of,
    last_user_index,
    less_reasoning,
    reasoning_of,
)
from ctxmodel.properties.converse_yardsticks import CONVERSE, block_kind
from ctxmodel.properties.gemini_yardsticks import GEMINI, signatures_went_with_their_calls
from ctxmodel.properties.json_reading import canon, short
from ctxmodel.properties.responses_yardsticks import RESPONSES, reasoning_findings
from ctxmodel.properties.suite_trim import returned

Msg = dict[str, Any]

#: The broken trimmers of this clause (``tests/targets/broken_reasoning.py``), one bug each; those of
#: Responses items.
_B = "python:tests.targets.broken_reasoning"
_R = "python:tests.targets.responses_trimmers"
_C = "python:tests.targets.converse_trimmers"
_G = "python:tests.targets.gemini_trimmers"


def _requests(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from ctxmodel.strategies.trim import trim_requests

    return trim_requests(policies)


def pair_with_input(output: Sequence[Msg], history: Sequence[Msg], dialect: str, partial: bool) -> list[int | None]:
    """For each returned message, the index of the input message it comes from, or ``None`` when
    none is (an invented message, §10.2's to report). An equal message first (the earliest after the
    last one paired, else any: a moved message carries its own reasoning); else one equal with both
    reasonings set aside, a partial of it under ``partial``, or it less some calls: the input
    message whose reasoning this one should carry, earliest after the last one paired first, so
    that of two messages alike but for their reasoning the one in order is taken."""
    keys = [canon(m) for m in history]
    bare = [less_reasoning(m, dialect) for m in history]
    bare_keys = [canon(m) for m in bare]
    out: list[int | None] = []
    at = 0
    for message in output:
        order = [*range(at, len(history)), *range(at)]
        key = canon(message)
        found = next((i for i in order if keys[i] == key), None)
        if found is None:
            mine = less_reasoning(message, dialect)
            mine_key = canon(mine)
            found = next((i for i in order if bare_keys[i] == mine_key or (partial and is_partial_of(mine, bare[i]))
                          or is_pruned_of(mine, bare[i])), None)
        out.append(found)
        if found is not None and found >= at:
            at = found + 1
    return out


_EXPECTED = {
    "reasoning-edited": "reasoning returned as the input's, unchanged: never edited, cut, rebuilt or added (§10.8)",
    "reasoning-stripped": "under trimReasoning=keep an item returned keeps the reasoning item right before it (§10.8)",
    "current-reasoning-stripped": "the current turn's items keep their reasoning: the provider refuses them without "
                                  "it (§10.8, domain §5.8)",
}


def _went_with_its_calls(message: Msg, original: Msg, dialect: str) -> bool:
    """Under ``trimToolCalls=pairs``, an assistant message that lost every call it made (and, in Chat,
    its text) may lose the reasoning that produced them: the reasoning went with what it came before,
    which is what §10.8 asks (the AI SDK's ``pruneMessages`` drops a reasoning part whose following
    parts were all pruned)."""
    if dialect == CHAT:
        calls = original.get("tool_calls")
        return (isinstance(calls, list) and bool(calls) and not message.get("tool_calls")
                and message.get("content") in (None, "", []))
    before = original.get("content")
    after = message.get("content")
    def use(b: Any) -> bool:
        return isinstance(b, Mapping) and (b.get("type") == "tool_use" or block_kind(b) == "toolUse")

    uses = [b for b in before if use(b)] if isinstance(before, list) else []
    return bool(uses) and isinstance(after, list) and not any(use(b) for b in after)


def _what(dialect: str) -> str:
    if dialect == CONVERSE:
        return "its reasoningContent blocks"
    if dialect == GEMINI:
        return "its thought parts and thought signatures"
    return "its reasoning_content" if dialect == CHAT else "its thinking and redacted_thinking blocks"


@check(
    "trim.reasoning-travels",
    op="trim",
    clause="contract §10.8",
    summary="A returned message carries its input message's reasoning unchanged (Anthropic thinking and "
            "redacted_thinking blocks, a Chat reasoning_content, Converse reasoningContent blocks, Gemini "
            "thought parts and signatures), or none of it "
            "only under trimReasoning=strip; "
            "under reasoningRequired=current-turn every assistant message after the last user message keeps its "
            "reasoning; a Responses reasoning item returned unchanged, right before the item it came before.",
    params=_requests,
    policies=("dialect", "trimReasoning", "reasoningRequired", "trimPartial", "trimToolCalls"),
    dialects=("anthropic", CHAT, RESPONSES, CONVERSE, GEMINI),
    witnesses=(
        Witness(f"{_B}:DropsSignatures", "reasoning-edited"),
        Witness(f"{_B}:CutsLongReasoningChat", "reasoning-edited"),
        Witness(f"{_B}:StripsThinking", "reasoning-stripped"),
        Witness(f"{_B}:StripsReasoningChat", "reasoning-stripped"),
        Witness(f"{_B}:StripsTheCurrentTurn", "current-reasoning-stripped"),
        Witness(f"{_B}:StripsTheCurrentTurnChat", "current-reasoning-stripped"),
        Witness(f"{_R}:DropsEmptySummary", "reasoning-edited"),
        Witness(f"{_R}:EditsEncryptedContent", "reasoning-edited"),
        Witness(f"{_R}:StripsReasoningUnderKeep", "reasoning-stripped"),
        Witness(f"{_R}:StripsTheCurrentTurn", "current-reasoning-stripped"),
        Witness(f"{_C}:DropsReasoningContent", "reasoning-stripped"),
        Witness(f"{_C}:LosesSignatures", "reasoning-edited"),
        Witness(f"{_G}:DropsThoughtSignatures", "reasoning-edited"),
    ),
)
def reasoning_travels(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = returned(probe, ex)
    if out is None:
        return
    history: list[Msg] = ex.params["messages"]
    dialect = str(probe.policies.get("dialect", "anthropic"))
    if dialect == RESPONSES:
        for code, what in reasoning_findings(out, history, probe.policies):
            yield Finding.fail(what, _EXPECTED[code], code=code)
        return
    strip = probe.policies.get("trimReasoning", "keep") == "strip"
    current = probe.policies.get("reasoningRequired", "no") == "current-turn"
    partial = probe.policies.get("trimPartial", "no") == "yes"
    pruned = probe.policies.get("trimToolCalls", "keep") == "pairs"
    last_user = last_user_index(history, dialect)
    turn_starts = -1 if last_user is None else last_user  # no user message: the whole history is the turn
    turn = "the input has no user message: it is all one turn" if last_user is None else (
        f"after the input's last user message, messages.{last_user}")
    found: dict[str, Finding] = {}
    for j, i in enumerate(pair_with_input(out, history, dialect, partial)):
        if i is None:
            continue
        message, original = out[j], history[i]
        mine, theirs = reasoning_of(message, dialect), reasoning_of(original, dialect)
        if canon(mine) == canon(theirs):
            continue
        where = f"messages.{j} of the answer (from messages.{i} of the input: {short(original, 80)})"
        if dialect == GEMINI and pruned and is_pruned_of(message, original) \
                and signatures_went_with_their_calls(message, original):
            continue  # a declared pruning took a call part, and its signature with it
        if mine:
            found.setdefault("reasoning-edited", Finding.fail(
                f"{where} carries reasoning that is not its input message's: {short(mine, 80)} where the input "
                f"had {short(theirs, 80) if theirs else 'none'}",
                "reasoning returned as the input's, unchanged: never edited, cut, rebuilt or added (§10.8)",
                code="reasoning-edited"))
        elif pruned and _went_with_its_calls(message, original, dialect):
            continue
        elif not strip:
            found.setdefault("reasoning-stripped", Finding.fail(
                f"{where} is returned without {_what(dialect)}, and the target declares trimReasoning=keep",
                "under trimReasoning=keep a returned message keeps all of its reasoning (§10.8)",
                code="reasoning-stripped"))
        elif current and original.get("role") in ("assistant", "model") and i > turn_starts:
            found.setdefault("current-reasoning-stripped", Finding.fail(
                f"{where} is an assistant message of the current turn ({turn}), returned without "
                f"{_what(dialect)}, and the target declares reasoningRequired=current-turn",
                "the current turn's assistant messages keep their reasoning: the provider refuses them "
                "without it (§10.8, domain §5.8)", code="current-reasoning-stripped"))
    yield from found.values()
