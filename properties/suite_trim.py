"""Properties of ``trim`` (contract §10), in the dialect the target declares.

What every trimmer must do, whatever it keeps: answer with no pairing violation its input did not
have, return messages of its input in order (or declared partials), fit its budget by its own
``count`` whenever the floor (what its policies keep) fits and say so otherwise, keep system
messages and the last user message as declared, and give the same answer when handed its answer.
Purity (§10.6's first half) is ``purity.trim``; what every ``count`` must do (§10.7) is in
``suite_count``. Which messages a trimmer drops, and why, is its own choice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import (
    Exchange,
    Finding,
    Probe,
    Rebudget,
    TargetCount,
    Witness,
    check,
    declare_op,
)
from ctxmodel.properties.chat_yardsticks import (
    floor,
    is_partial_of,
    is_pruned_of,
    is_system,
    last_user_index,
    masked_placeholders,
    match_in_order,
    violations,
)
from ctxmodel.properties.converse_yardsticks import CONVERSE, ROLE_RULES
from ctxmodel.properties.gemini_yardsticks import GEMINI, set_aside_rejoined
from ctxmodel.properties.json_reading import canon, short
from ctxmodel.properties.responses_yardsticks import RESPONSES, separations
from ctxmodel.properties.yardsticks import split_joined_users

Msg = dict[str, Any]


def _requests(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from ctxmodel.strategies.trim import trim_requests

    return trim_requests(policies)


#: The broken trimmers (``tests/targets/broken_trim.py``), one bug each; those of Responses items.
_B = "python:tests.targets.broken_trim"
_R = "python:tests.targets.responses_trimmers"
_C = "python:tests.targets.converse_trimmers"
_G = "python:tests.targets.gemini_trimmers"

def _rebudget(count: TargetCount | None, policies: Mapping[str, str], tokenizer: str) -> Rebudget:
    """A drawn budget point (a place such as "all but the first turn", which moves with every message
    dropped) made a number of tokens, lowered by what the drop took away, by the target's own count
    where it has one (else the estimate the probe placed the point with), so that the smaller history
    is cut where the larger was."""
    from ctxmodel.strategies.trim import BUDGET_KEY, budget_of

    def by(prompt: object) -> Callable[[list[Msg]], int] | None:
        if count is None:
            return None
        said = prompt if isinstance(prompt, str) and prompt else None
        return lambda messages: count(messages, said)

    def whole(params: dict[str, Any]) -> int:
        return budget_of({**params, BUDGET_KEY: {"at": "all"}}, policies, by(params.get("systemPrompt")))

    def rebudget(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
        if not isinstance(before.get(BUDGET_KEY), dict):
            return None
        tokens = budget_of(before, policies, by(before.get("systemPrompt")))
        dropped = whole(before) - whole(after)
        if dropped <= 0 or tokens - dropped < 0:
            return None
        return {**after, BUDGET_KEY: {"at": "tokens", "tokens": tokens - dropped}}

    return rebudget


declare_op("trim", params=_requests, policies=("dialect",), rebudget=_rebudget, purity_witnesses=(
    Witness(f"{_B}:MutatesInput", "mutates-input"),
    Witness(f"{_B}:Nondeterministic", "answers-differently"),
))




def _dialect(probe: Probe) -> str:
    return str(probe.policies.get("dialect", "anthropic"))


def answer(result: Any) -> tuple[list[Msg] | None, str | None, str | None]:
    """``(messages, error, problem)``: a list of message objects, or the controlled error, or what is
    wrong with a reply that is neither (contract §10 result)."""
    if not isinstance(result, dict):
        return None, None, f"trim returned {short(result)}: expected an object"
    messages, error = result.get("messages"), result.get("error")
    if error is not None:
        if not isinstance(error, str) or not error or messages is not None:
            return None, None, f"trim returned {short(result)}: an error is a non-empty string, without messages"
        return None, error, None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None, None, f"trim returned {short(result)}: expected {{\"messages\": [..]}} or {{\"error\": str}}"
    return messages, None, None


def returned(probe: Probe, ex: Exchange) -> list[Msg] | None:
    """The answer's messages as §10's clauses judge them: under ``mergeUsers=yes`` each join of user
    messages split back into them (``yardsticks.split_joined_users``)."""
    out = answer(ex.result)[0]
    if out is None or probe.policies.get("mergeUsers", "no") != "yes":
        return out
    return split_joined_users(out, ex.params["messages"], probe.policies.get("trimPlaceholder", "none") == "one")


@check(
    "trim.accepted",
    op="trim",
    clause="contract §10.1",
    summary="The answer has no pairing violation its input did not have (by rule and tool id, in the "
    "declared dialect), "
    "and a non-empty input is never answered with no messages.",
    witnesses=(Witness(f"{_B}:CutsBetweenCallAndResult", "pairing-broken"), Witness(f"{_B}:Empties", "emptied"),
               Witness(f"{_R}:CountsItemsOneByOne", "pairing-broken"),
               Witness(f"{_R}:DropsReasoningBeforeAnIdItem", "pairing-broken"),
               Witness(f"{_C}:OpensAnywhere", "pairing-broken"),
               Witness(f"{_C}:KeepsTheFirstMessage", "role-order"),
               Witness(f"{_G}:OpensAnywhereGemini", "pairing-broken")),
)
def accepted(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = returned(probe, ex)
    if out is None:
        return
    history: list[Msg] = ex.params["messages"]
    if history and not out:
        yield Finding.fail("trim answered a non-empty history with no messages",
                           "a request the API accepts: never an empty one (§10.1)", code="emptied")
        return
    dialect = _dialect(probe)
    new = violations(out, dialect) - violations(history, dialect)
    if dialect == RESPONSES:
        new += separations(out, history)
    roles = sorted(v for v in new if v[0] in ROLE_RULES)
    pairs = sorted(v for v in new if v[0] not in ROLE_RULES)
    if pairs:
        (rule, tool_id), *_ = pairs
        yield Finding.fail(
            f"the answer has a pairing violation its input did not have: {rule} for {tool_id!r}",
            "no new pairing violation (§10.1)", code="pairing-broken",
        )
    if roles:
        rule = roles[0][0]
        said = "does not open with a user message" if rule == "first-message-user" else \
            "has two neighbouring messages of one role"
        yield Finding.fail(
            f"the answer {said} ({rule}) where its input did not; Bedrock refuses it (domain §5.10)",
            "no new pairing violation (§10.1): in Converse the first message is the user's and roles alternate",
            code="role-order",
        )


@check(
    "trim.keeps-order",
    op="trim",
    clause="contract §10.2",
    summary="Every returned message is a message of the input, or a declared partial of one, in the input's order; "
    "nothing is invented, duplicated or moved; a declared placeholder stands only where messages were dropped "
    "(a message less its reasoning is judged by trim.reasoning-travels).",
    policies=("trimPartial", "trimToolCalls", "trimPlaceholder", "mergeUsers", "lateResults"),
    witnesses=(
        Witness(f"{_B}:HoistsSystemMessages", "moved"),
        Witness(f"{_B}:InventsANotice", "invented"),
        Witness(f"{_B}:CutsWithoutDeclaring", "cut-undeclared"),
        Witness(f"{_B}:PrunesCallsWithoutDeclaring", "calls-dropped-undeclared"),
        Witness(f"{_B}:RepeatsTheLastUser", "duplicated"),
        Witness(f"{_B}:PlaceholderWhereNothingWasDropped", "invented"),
        Witness(f"{_B}:JoinsUsersAcrossTheAnswer", "moved"),
        Witness(f"{_G}:RejoinsThePromptToo", "invented"),
        Witness(f"{_G}:RejoinsAheadOfTheCall", "moved"),
        Witness(f"{_G}:SummaryWhereNothingWasDropped", "invented"),
    ),
)
def keeps_order(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = returned(probe, ex)
    if out is None:
        return
    partial = probe.policies.get("trimPartial", "no") == "yes"
    pruned = probe.policies.get("trimToolCalls", "keep") == "pairs"
    placeholder = probe.policies.get("trimPlaceholder", "none") == "one"
    # A message less its reasoning is matched to its input message under either trimReasoning: under
    # strip it is allowed, under keep it is §10.8's finding (reasoning-stripped), not an invented one.
    history: list[Msg] = ex.params["messages"]
    where = list(range(len(out)))
    if probe.policies.get("lateResults", "stay") == "rejoin" and _dialect(probe) == GEMINI:
        out, history, where = set_aside_rejoined(out, history, _pruned_relation(pruned), pruned)
    matched, j, why = match_in_order(out, history, partial, pruned, placeholder, reasoning=_dialect(probe))
    if matched is not None:
        return
    said = {
        "invented": "is not a message of the input" + ("" if not partial else " nor a partial of one") + (
            "" if not placeholder else ", and not the one placeholder where messages were dropped"),
        "cut-undeclared": "is a cut of an input message, and the target does not declare trimPartial=yes",
        "calls-dropped-undeclared": "is an input message less some of its tool calls, and the target does not "
                                    "declare trimToolCalls=pairs",
        "duplicated": "repeats an input message returned already",
        "moved": "is an input message returned out of the input's order",
    }[why]
    yield Finding.fail(f"messages.{where[j]} of the answer ({short(out[j], 100)}) {said}",
                       "the input's messages, in order, or declared partials of them (§10.2)", code=why)


def _pruned_relation(pruned: bool) -> Callable[[Msg, Msg], bool]:
    """A returned call content as it may stand for an input one (``trimToolCalls=pairs``)."""
    return (lambda m, original: is_pruned_of(m, original)) if pruned else (lambda m, original: False)


def _messages(n: int) -> str:
    return f"{n} message" if n == 1 else f"{n} messages"


def _count(probe: Probe, messages: list[Msg], params: Mapping[str, Any]) -> int | None:
    request: dict[str, Any] = {"messages": messages}
    if _dialect(probe) in ("anthropic", CONVERSE, GEMINI) and isinstance(params.get("systemPrompt"), str):
        request["systemPrompt"] = params["systemPrompt"]
    tokens = probe.call("count", request).get("tokens")
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


@check(
    "trim.fits",
    op="trim",
    clause="contract §10.3",
    summary="With a budget, the answer's count by the target's own count is within maxTokens; the "
    "controlled error only "
    "when neither the input nor the floor (what the policies keep) fits.",
    policies=("trimBudget", "trimSystem", "trimLastUser"),
    requires=("trim", "count"),
    witnesses=(
        Witness(f"{_B}:OverBudgetAsSuccess", "error-expected"),
        Witness(f"{_B}:TrimsTooLittle", "over-budget"),
        Witness(f"{_B}:ReturnsInputUntrimmed", "untrimmed"),
        Witness(f"{_B}:GivesUpEarly", "gave-up"),
        Witness(f"{_B}:ShapelessReply", "bad-result"),
    ),
)
def fits(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out, error, problem = answer(ex.result)
    if problem is not None:
        yield Finding.fail(problem, "the trimmed messages, or the controlled error (§10)", code="bad-result")
        return
    budget = ex.params.get("maxTokens")
    if not isinstance(budget, int):
        return
    history: list[Msg] = ex.params["messages"]
    if out is not None:
        if not out and history:
            return  # no messages at all is trim.accepted's emptied: one fixture, not that and over-budget
        tokens = _count(probe, out, ex.params)
        if tokens is None or tokens <= budget:
            return
        untrimmed = canon(out) == canon(history)
        said = f"trim returned {'its input unchanged' if untrimmed else _messages(len(out))}, which its own count " \
               f"puts at {tokens} tokens, over the budget of {budget}"
        kept = [history[i] for i in floor(history, _dialect(probe), probe.policies)]
        low = _count(probe, kept, ex.params) if kept else None
        if low is not None and low > budget:
            # A cause of its own: where nothing the policies allow fits, the answer owed was the error.
            yield Finding.fail(f"{said}, where not even the {_messages(len(kept))} its policies keep fit ({low} "
                               "tokens)", "the controlled error when nothing the policies allow fits (§10.3)",
                               code="error-expected")
            return
        yield Finding.fail(said, "an answer within maxTokens by the target's count, or the controlled error (§10.3)",
                           code="untrimmed" if untrimmed else "over-budget")
        return
    whole = _count(probe, history, ex.params)
    kept = [history[i] for i in floor(history, _dialect(probe), probe.policies)]
    if whole is not None and whole <= budget:
        yield Finding.fail(f"trim gave up ({short(error)}) though its input fits: {whole} of {budget} tokens",
                           "the controlled error only when nothing the policies allow fits (§10.3)", code="gave-up")
        return
    low = _count(probe, kept, ex.params) if kept else None
    if low is not None and low <= budget:
        yield Finding.fail(
            f"trim gave up ({short(error)}) though the {len(kept)} messages its policies keep fit: {low} of "
            f"{budget} tokens by its own count",
            "the controlled error only when nothing the policies allow fits (§10.3)", code="gave-up",
        )


@check(
    "trim.system-as-declared",
    op="trim",
    clause="contract §10.4",
    summary="System and developer messages are returned as trimSystem declares: every one (keep), a "
    "leading one (first).",
    policies=("trimSystem", "trimPartial"),
    witnesses=(Witness(f"{_B}:DropsTheSystemPrompt", "system-dropped"),
               Witness(f"{_B}:JoinsTheSystemMessages", "system-merged")),
)
def system_as_declared(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = returned(probe, ex)
    dialect = _dialect(probe)
    if out is None or dialect == "anthropic":
        return  # in Anthropic the system prompt is a param, never part of the answer
    history: list[Msg] = ex.params["messages"]
    policy = probe.policies.get("trimSystem", "keep")
    partial = probe.policies.get("trimPartial", "no") == "yes"
    if policy == "first" and history and is_system(history[0], dialect):
        if not out or not (canon(out[0]) == canon(history[0]) or (partial and is_partial_of(out[0], history[0]))):
            yield Finding.fail("the leading system message of the input is not the answer's first message",
                               "trimSystem=first: a leading system message is kept (§10.4)", code="system-dropped")
        return
    if policy != "keep":
        return
    wanted = [canon(m) for m in history if is_system(m, dialect)]
    have = [canon(m) for m in out if is_system(m, dialect)]
    for key in dict.fromkeys(wanted):
        if have.count(key) < wanted.count(key) and not partial:
            i = next(i for i, m in enumerate(history) if canon(m) == key)
            yield _system_missing(i, history, out, dialect)
            return
    if partial and len(have) < len(wanted):
        i = next((i for i, m in enumerate(history) if is_system(m, dialect) and not any(
            canon(o) == canon(m) or is_partial_of(o, m) for o in out if is_system(o, dialect))),
            next(i for i, m in enumerate(history) if is_system(m, dialect)))
        yield _system_missing(i, history, out, dialect, f"{len(wanted) - len(have)} of the input's {len(wanted)} "
                              "system messages are not in the answer; ")


def _text(message: Msg) -> str | None:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return None


def _system_missing(i: int, history: list[Msg], out: list[Msg], dialect: str, lead: str = "") -> Finding:
    """A system message not returned: ``system-merged`` when an answer's system message that is no
    input message holds its text and more (two instructions joined into one: the model reads them
    as one, in one place), else ``system-dropped``."""
    text = _text(history[i])
    inputs = {canon(m) for m in history}
    joined = next((j for j, m in enumerate(out) if is_system(m, dialect) and canon(m) not in inputs
                   and text is not None and (t := _text(m)) is not None and text in t and len(t) > len(text)), None)
    if joined is not None:
        return Finding.fail(f"{lead}system message messages.{i} of the input ({short(history[i], 80)}) comes back "
                            f"joined with other text in messages.{joined} of the answer ({short(out[joined], 80)})",
                            "trimSystem=keep: every system message is returned, unchanged and in its place (§10.4)",
                            code="system-merged")
    return Finding.fail(f"{lead}system message messages.{i} of the input ({short(history[i], 80)}) was dropped",
                        "trimSystem=keep: every system message is returned (§10.4)", code="system-dropped")


def _blank(message: Msg) -> bool:
    """Nothing but blank text: a string, or text blocks or parts (``content`` or Gemini's ``parts``)
    whose text is empty or white space. The API refuses such a message, so no trimmer owes it."""
    content = message.get("parts", message.get("content"))
    if isinstance(content, str):
        return not content.strip()
    if not isinstance(content, list):
        return False
    return all(isinstance(b, Mapping) and isinstance(b.get("text"), str) and not b["text"].strip()
               and set(b) <= {"type", "text"} for b in content)


@check(
    "trim.last-user-as-declared",
    op="trim",
    clause="contract §10.5",
    summary="Under trimLastUser=keep the input's last user message is the answer's last user message (or a declared "
    "partial of it).",
    policies=("trimLastUser", "trimPartial"),
    witnesses=(Witness(f"{_B}:DropsTheLastUser", "last-user-dropped"),),
)
def last_user_as_declared(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = returned(probe, ex)
    if out is None or probe.policies.get("trimLastUser", "keep") != "keep":
        return
    dialect = _dialect(probe)
    history: list[Msg] = ex.params["messages"]
    wanted = last_user_index(history, dialect)
    if wanted is None or _blank(history[wanted]):
        return  # a blank message is one the API refuses to be sent: dropping it is no loss (§10.5)
    got = last_user_index(out, dialect)
    original = history[wanted]
    if got is not None and (canon(out[got]) == canon(original) or (
            probe.policies.get("trimPartial", "no") == "yes" and is_partial_of(out[got], original))):
        return
    yield Finding.fail(
        f"the input's last user message (messages.{wanted}: {short(original, 80)}) is not the answer's last user "
        "message",
        "trimLastUser=keep: the last user message survives (§10.5)", code="last-user-dropped",
    )


@check(
    "trim.idempotent",
    op="trim",
    clause="contract §10.6",
    summary="Trimming the answer again with the same params returns it unchanged (a declared "
    "placeholder's text aside).",
    policies=("trimPlaceholder",),
    witnesses=(Witness(f"{_B}:DropsOneMoreEachTime", "not-idempotent"),
               Witness(f"{_B}:PlaceholderDropsOneMoreEachTime", "not-idempotent")),
)
def idempotent(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    out = answer(ex.result)[0]
    if out is None:
        return
    again = probe.call("trim", {**ex.params, "messages": out})
    second, error, _ = answer(again)
    if second is not None and canon(second) == canon(out):
        return
    history = ex.params["messages"]
    if second is not None and probe.policies.get("trimPlaceholder", "none") == "one" and canon(
            masked_placeholders(second, history)) == canon(masked_placeholders(out, history)):
        return
    said = f"an error ({short(error)})" if error is not None else (
        f"{short(again)}" if second is None else f"{len(second)} messages instead of the {len(out)} given")
    yield Finding.fail(f"trimming the answer again returned {said}", "trim(trim(x)) == trim(x) (§10.6)",
                       code="not-idempotent")
