"""Properties of ``recover`` (contract §4 rules 1-9, §7 result shape).

Every budget question is answered by the harness's own recount (system prompt plus the target's
effective history, under the tokenizer it declares), never by the figures the target reports. How
much a target hides, which messages, in how many calls (``recoverSuccess=converges``), the marker
text, and whether it degrades at all are its own choices; what is judged is that it never deletes,
tags only what it may, creates no pairing violation, shrinks only tool-result text, makes progress
or says it failed, and fits (or converges) per its declared policy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs
from hypothesis.strategies import SearchStrategy

from ctxmodel import codec
from ctxmodel.partition import DEGRADABLE, EVERY_REGIME, VISIBLE, Plan, by_degradable, by_visible, pattern
from ctxmodel.properties.catalogue import (
    Exchange,
    Finding,
    Probe,
    Rebudget,
    TargetCount,
    Witness,
    check,
    declare_op,
    plan_params,
    registered,
)
from ctxmodel.properties.json_reading import (
    Malformed,
    btype,
    canon,
    content_blocks,
    messages_of,
    pairing_violations,
    short,
    use_ids,
)
from ctxmodel.properties.wire import introduced_findings
from ctxmodel.properties.yardsticks import FAILED_PREFIX, allowed_tokens, visible_mask

Msg = dict[str, Any]
_INT_KEYS = ("messagesRemoved", "prevContextTokens", "newContextTokens")


#: The broken recover targets (``tests/targets/broken_recover.py``), one bug each.
_R = "python:tests.targets.broken_recover"

def _rebudget(count: TargetCount | None, policies: Mapping[str, str], tokenizer: str) -> Rebudget:
    """A ``recover`` request's ``contextWindow`` lowered by what the minimizer dropped (its messages' and
    system prompt's count by the declared tokenizer, as the budget is judged), so that the smaller
    history is as far over its budget as the larger was."""
    from ctxmodel.contract_data import reserve_for, window_for
    from ctxmodel.tokens import get_counter

    counter = get_counter(tokenizer)

    def tokens(params: dict[str, Any]) -> int:
        system = params.get("systemPrompt")
        return int(counter.count_messages(codec.load(params["messages"]))) + (
            int(counter.count_text(system)) if isinstance(system, str) else 0)

    def rebudget(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
        window, max_tokens = before.get("contextWindow"), before.get("maxTokens")
        if not isinstance(window, int) or not isinstance(max_tokens, int) or isinstance(window, bool):
            return None
        dropped = tokens(before) - tokens(after)
        allowed = allowed_tokens(window, max_tokens) - dropped
        if dropped <= 0 or allowed < 1:
            return None
        return {**after, "contextWindow": window_for(allowed, reserve_for(max_tokens))}

    return rebudget


declare_op(
    "recover",
    params=plan_params(Plan(EVERY_REGIME), "recovery_requests_of_every_regime"),
    rebudget=_rebudget,
    purity_witnesses=(
        Witness("python:tests.targets.broken_ops:RemembersToolUses", "answers-differently"),
        Witness("python:tests.targets.broken_ops:MutatesInput", "mutates-input"),
    ),
)

#: The cases where a correct target may tag: over budget, recoverable or not (a target that tags the
#: first or last visible message is exactly one that "succeeds" where nothing else could).
OVER_BUDGET = ("little-over", "far-over", "impossible")


#: What ``recover.sequential`` starts from: over-budget requests, one regime of contract §4 in five
#: each (hide, degrade, progress without a fit, no progress, the reserve gap).
SEQUENTIAL_PLAN = Plan(
    (pattern("over-hide"), pattern("over-degrade-only"), pattern("over-stuck"), pattern("over-none"),
     pattern("reserve-gap")),
)


def allowed_budget(params: Mapping[str, Any]) -> int:
    return allowed_tokens(int(params["contextWindow"]), int(params.get("maxTokens", 0)))


@attrs.frozen
class Recovered:
    """One recover call and what the harness makes of it."""

    history: list[Msg]
    result: dict[str, Any]
    messages: list[Msg]
    error: str | None
    allowed: int
    system_prompt: str


def read_recovery(ex: Exchange) -> Recovered:
    result = ex.result
    messages = messages_of(result, "recover")
    error = result.get("error")
    if error is not None and not isinstance(error, str):
        raise Malformed(f"recover returned error {short(error)}: expected a string or null")
    return Recovered(
        history=ex.params["messages"],
        result=result,
        messages=messages,
        error=error,
        allowed=allowed_budget(ex.params),
        system_prompt=str(ex.params.get("systemPrompt", "")),
    )


@attrs.frozen
class Aligned:
    """The result read as the input plus new markers: ``pairs`` of (input index, output index)."""

    pairs: list[tuple[int, int]]
    markers: list[int]
    problem: str | None


def _meta(msg: Msg) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if k not in ("content", "truncationParent")}


def _same_message(before: Msg, after: Msg) -> bool:
    """The same stored message, tags aside, with the same blocks (their text may be degraded)."""
    if before.get("role") != after.get("role") or canon(_meta(before)) != canon(_meta(after)):
        return False
    a, b = before.get("content"), after.get("content")
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    # Same number of blocks: what changed inside them is recover.degrade-only-text's to judge.
    return isinstance(a, list) and isinstance(b, list) and len(a) == len(b)


def align_recovery(history: list[Msg], out: list[Msg]) -> Aligned:
    pairs: list[tuple[int, int]] = []
    markers: list[int] = []
    i = 0
    for k, msg in enumerate(out):
        if i < len(history) and _same_message(history[i], msg):
            pairs.append((i, k))
            i += 1
        elif msg.get("isTruncationMarker") is True and (
            i >= len(history) or msg.get("truncationId") != history[i].get("truncationId")
        ):
            markers.append(k)
        else:
            where = f"input messages.{i}" if i < len(history) else "no input message"
            return Aligned(pairs, markers, f"messages.{k} of the result is neither {where} (tags and degraded "
                                           f"tool-result text aside) nor a new truncation marker: {short(msg, 100)}")
    if i < len(history):
        return Aligned(pairs, markers, f"input messages.{i} is missing from the result (deleted, or its role, "
                                       f"metadata or blocks replaced): {short(history[i], 100)}")
    return Aligned(pairs, markers, None)


def _visible(history: list[Msg]) -> list[bool]:
    return visible_mask(history)


@attrs.frozen
class Tagging:
    """What one successful call hid, read from an aligned result (contract §4.3).

    ``markers``: each new marker's truncationId and output index. ``tagged``: the input messages
    this call hid, as (input index, output index, the new marker id): a message whose
    ``truncationParent`` now names a new marker, either because it changed, or because it was visible
    and the new marker revived an id it already carried (a dangling parent, contract §2): both hide
    it by this call's doing. ``stray``: a ``truncationParent`` that changed to something naming no
    new marker (removed, or pointing elsewhere), as (output index, before, after).
    """

    markers: dict[str, int]
    tagged: list[tuple[int, int, str]]
    stray: list[tuple[int, Any, Any]]

    @property
    def used(self) -> set[str]:
        return {tid for _, _, tid in self.tagged}


def read_tagging(history: list[Msg], out: list[Msg], aligned: Aligned, mask: list[bool]) -> Tagging:
    markers: dict[str, int] = {}
    for k in aligned.markers:
        tid = out[k].get("truncationId")
        if isinstance(tid, str):
            markers.setdefault(tid, k)
    tagged: list[tuple[int, int, str]] = []
    stray: list[tuple[int, Any, Any]] = []
    for i, k in aligned.pairs:
        before, after = history[i].get("truncationParent"), out[k].get("truncationParent")
        if isinstance(after, str) and after in markers:
            if before != after or mask[i]:
                tagged.append((i, k, after))
        elif before != after:
            stray.append((k, before, after))
    return Tagging(markers, tagged, stray)




@check(
    "recover.result-shape",
    op="recover",
    clause="contract §7, §4.9; domain §7 C11",
    summary="The reply has messages, error (string or null), messagesRemoved, prevContextTokens, newContextTokens "
    "(integers) and truncationId (string or null); a warning when messagesRemoved is not the number of "
    "messages the call newly tagged (0 on a controlled error).",
    plan=Plan(EVERY_REGIME),
    witnesses=(Witness(f"{_R}:LooseResultShape", ""), Witness(f"{_R}:MiscountsRemoved", "", "warn")),
)
def result_shape(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    """messagesRemoved is held to domain §7 C11 (the number of newly tagged messages) only as a
    warning: the contract types it (§7) but gives its meaning only in the reference's paragraph of §4
    ("a controlled error also gives messagesRemoved 0"), and §4.9 makes a reported figure that
    disagrees with the harness a warning; the agent shows it to the user, nothing decides on it."""
    result = ex.result
    messages = messages_of(result, "recover")
    expected = "the recover result of contract §7"
    for key in ("error", "truncationId"):
        if key not in result or not (result[key] is None or isinstance(result[key], str)):
            got = short(result[key]) if key in result else "nothing"
            yield Finding.fail(f"recover result.{key} is {got}: expected a string or null", expected)
            return
    for key in _INT_KEYS:
        value = result.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            got = short(value) if key in result else "nothing"
            yield Finding.fail(f"recover result.{key} is {got}: expected an integer", expected)
            return
    reported = result["messagesRemoved"]
    if result["error"] is not None:
        if reported != 0:
            yield Finding.warn(
                f"recover failed ({short(result['error'], 60)}) yet reports messagesRemoved {reported}: a controlled "
                "error hides nothing (domain §7 C11)"
            )
        return
    history = ex.params["messages"]
    aligned = align_recovery(history, messages)
    if aligned.problem:
        return  # recover.never-deletes reports it
    tagged = len(read_tagging(history, messages, aligned, _visible(history)).tagged)
    if reported != tagged:
        yield Finding.warn(
            f"recover reports messagesRemoved {reported} but tagged {tagged} message(s) it hid "
            "(domain §7 C11: messagesRemoved = the number of newly tagged messages)"
        )


@check(
    "recover.allowed-nonpositive-errors",
    op="recover",
    clause="contract §4.1",
    summary="When allowed = floor(0.9 * contextWindow) - reserve is zero or less, recover returns a controlled error.",
    plan=Plan(by_visible("allowed<=0")),
    witnesses=(Witness(f"{_R}:NoNonpositiveGuard", ""),),
)
def allowed_nonpositive(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    if allowed_budget(ex.params) > 0:
        return
    got = read_recovery(ex)
    if got.error is None:
        yield Finding.fail(
            f"allowed is {got.allowed} (contextWindow {ex.params['contextWindow']}, "
            f"maxTokens {ex.params.get('maxTokens')}) but recover reported success",
            "a controlled error when allowed <= 0 (§4.1)",
        )


@check(
    "recover.within-budget-unchanged",
    op="recover",
    clause="contract §4.2",
    summary="Within budget (a recount equal to allowed included): no change, no error.",
    plan=Plan(by_visible("within") + by_visible("at-allowed")),
    witnesses=(Witness(f"{_R}:RefusesWithinBudget", ""),),
)
def within_budget(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    allowed = allowed_budget(ex.params)
    if allowed <= 0:
        return
    count = probe.recount(ex.params["messages"], str(ex.params.get("systemPrompt", "")))
    if count > allowed:
        return  # the declared tokenizer counts more than the strategy aimed for: another case
    got = read_recovery(ex)
    expected = "no change and no error within budget (§4.2)"
    if got.error is not None:
        yield Finding.fail(f"the recount is {count} <= allowed {allowed}, yet recover failed: {got.error}", expected)
    elif canon(got.messages) != canon(got.history):  # numbers by value (contract §1)
        from ctxmodel.properties.json_reading import first_difference

        where = first_difference(got.history, got.messages, "messages")
        yield Finding.fail(f"the recount is {count} <= allowed {allowed}, yet recover changed {where}", expected)


@check(
    "recover.never-deletes",
    op="recover",
    clause="contract §4.3",
    summary="A successful result is the input (tags and degraded tool-result text aside) plus new truncation markers: "
    "no message deleted, reordered or rewritten.",
    plan=Plan(
        by_visible("over-hide") + by_visible("over-degrade-only") + (pattern("over-stuck"),),
        also=by_degradable("over-degrade-only"),
    ),
    witnesses=(Witness(f"{_R}:DeletesHidden", ""),),
)
def never_deletes(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    aligned = align_recovery(got.history, got.messages)
    if aligned.problem:
        yield Finding.fail(aligned.problem, "never delete a message: hide by tagging, one marker per truncation (§4.3)")


@check(
    "recover.tagging-rules",
    op="recover",
    clause="contract §4.3",
    summary="Only visible messages are tagged, each with the truncationId of a new user marker (isTruncationMarker, a "
    "fresh id) that tags at least one message; never the first or last visible message, the tool_use message "
    "whose results the last one holds, or an earlier marker.",
    plan=Plan(
        (*by_visible("over-hide"), pattern("over-degrade-only"), pattern("over-stuck"), pattern("over-none"),
         pattern("reserve-gap")),
    ),
    witnesses=(
        Witness(f"{_R}:TagsFirstVisible", "tagged-protected"),
        Witness(f"{_R}:MarkerAsAssistant", "marker-shape"),
        Witness(f"{_R}:UnusedMarker", "stray-parent"),
        Witness(f"{_R}:StatusMarker", "unused-marker"),
    ),
)
def tagging_rules(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    """A marker must name a truncation: one whose id no message is tagged with is an extra user
    message in every later request, the pre-#9844 layout (domain §3.6: "no marker when nothing is
    removed"). How many markers a call adds is not judged: the contract asks one per truncation, and
    a call may truncate more than once."""
    got = read_recovery(ex)
    if got.error is not None:
        return
    aligned = align_recovery(got.history, got.messages)
    if aligned.problem:
        return  # recover.never-deletes reports it
    history, out = got.history, got.messages
    expected = "tag only visible messages, with one new user marker per truncation (§4.3)"
    # An id a dangling truncationParent carries may be reused: the messages it hides again count as
    # tagged by this call (``read_tagging``) and are judged like any other.
    old_ids = {m.get("truncationId") for m in history if m.get("truncationId") is not None}
    seen: set[str] = set()
    for k in aligned.markers:
        marker = out[k]
        tid = marker.get("truncationId")
        if marker.get("role") != "user" or not isinstance(tid, str) or tid in old_ids or tid in seen:
            yield Finding.fail(
                f"messages.{k}: a new marker needs role user and a fresh truncationId string; got role "
                f"{marker.get('role')!r}, truncationId {short(tid)}"
                + (" (already used in the input)" if tid in old_ids else " (used twice)" if tid in seen else ""),
                expected,
                code="marker-shape",
            )
            return
        seen.add(tid)
    mask = _visible(history)
    tagging = read_tagging(history, out, aligned, mask)
    for k, before, after in tagging.stray:
        yield Finding.fail(
            f"messages.{k}: truncationParent went from {short(before)} to {short(after)}, which names no new marker",
            expected,
            code="stray-parent",
        )
        return
    visible = [i for i, v in enumerate(mask) if v]
    protected: dict[int, str] = {}
    if visible:
        protected[visible[0]] = "the first visible message"
        protected[visible[-1]] = "the last visible message"
        if len(visible) > 1:
            last, prev = history[visible[-1]], history[visible[-2]]
            ids = set(use_ids(prev))
            if ids and any(
                btype(b) == "tool_result" and b.get("tool_use_id") in ids for b in content_blocks(last)
            ):
                protected[visible[-2]] = "the tool_use message whose results the last visible message holds"
    for i, k, _ in tagging.tagged:
        why, code = None, ""
        if not mask[i]:
            why, code = "it was already hidden", "tagged-hidden"
        elif history[i].get("isTruncationMarker") is True:
            why, code = "it is the marker of an earlier truncation", "tagged-marker"
        elif i in protected:
            why, code = f"it is {protected[i]}", "tagged-protected"
        if why:
            yield Finding.fail(f"messages.{k} (input messages.{i}) was tagged, but {why}", expected, code=code)
            return
    for tid, k in tagging.markers.items():
        if tid not in tagging.used:
            yield Finding.fail(
                f"messages.{k}: a new truncation marker (truncationId {short(tid)}) that no message is tagged with",
                "a marker per truncation: each new marker's truncationId is the truncationParent of a message "
                "this call hid (§4.3)",
                code="unused-marker",
            )
            return


@check(
    "recover.no-new-pairing-violations",
    op="recover",
    clause="contract §4.4",
    summary="Every pairing violation of the request built from the result was already in the request built from the "
    "input (by rule and tool id), the target's own request both times.",
    plan=Plan(by_visible("over-hide") + by_visible("over-degrade-only")),
    witnesses=(Witness(f"{_R}:SplitsPairs", "unexpected-result"),),
)
def no_new_pairing_violations(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    before = pairing_violations(probe.request(got.history))
    after_request = probe.request(got.messages)
    new = pairing_violations(after_request) - before
    if new:
        (rule, tool_id), _ = sorted(new.items())[0]
        text = {
            "missing-result": f"tool_use {tool_id} has no tool_result at the start of the next message",
            "duplicate-result": f"tool_use {tool_id} gets more than one result",
            "unexpected-result": f"tool_result {tool_id} has no tool_use in the message before it",
        }[rule]
        yield Finding.fail(
            f"the request built from the result breaks a pairing rule the input's request did not: {text}",
            "recovery creates no pairing violation (§4.4)",
            code=rule,
        )


def _text_edits(before: Msg, after: Msg) -> Iterator[tuple[int, int | None, str, str] | str]:
    """The edits between two aligned messages: ``(block, item, old text, new text)`` for a tool-result
    text, or a one-line description of anything else that changed."""
    a, b = before.get("content"), after.get("content")
    if not isinstance(a, list) or not isinstance(b, list):
        return
    for m, (x, y) in enumerate(zip(a, b, strict=True)):
        if canon(x) == canon(y):
            continue
        if btype(x) != "tool_result":
            yield f"content.{m} is a {btype(x)} block"
            continue
        if {k: v for k, v in x.items() if k != "content"} != {k: v for k, v in y.items() if k != "content"}:
            yield f"content.{m}: a tool_result field other than its content changed"
            continue
        cx, cy = x.get("content"), y.get("content")
        if isinstance(cx, str) and isinstance(cy, str):
            yield (m, None, cx, cy)
            continue
        if not (isinstance(cx, list) and isinstance(cy, list) and len(cx) == len(cy)):
            yield f"content.{m}.content changed form"
            continue
        for j, (p, q) in enumerate(zip(cx, cy, strict=True)):
            if canon(p) == canon(q):
                continue
            text_p = p.get("text") if btype(p) == "text" else None
            text_q = q.get("text") if btype(q) == "text" else None
            same_rest = {k: v for k, v in p.items() if k != "text"} == {k: v for k, v in q.items() if k != "text"}
            if isinstance(text_p, str) and isinstance(text_q, str) and same_rest:
                yield (m, j, text_p, text_q)
            else:
                yield f"content.{m}.content.{j} is a {btype(p)} item"


@check(
    "recover.degrade-only-text",
    op="recover",
    clause="contract §4.5",
    summary="Degradation edits only the text of visible tool results (string content or text items): never images, "
    "other blocks, tool_use_id, is_error or block order.",
    plan=Plan(
        by_visible("over-degrade-only") + tuple(pattern("over-hide", v) for v in VISIBLE if v != "plain")
        + (pattern("over-stuck"), pattern("over-none")),
        also=by_degradable("over-degrade-only") + by_degradable("over-stuck"),
        focus=tuple(pattern("over-degrade-only", v) for v in VISIBLE if v != "plain"),
    ),
    witnesses=(
        Witness(f"{_R}:ReplacesImages", "non-text-edited"),
        Witness(f"{_R}:CutsWhatItHides", "degraded-then-hidden", "warn"),
    ),
)
def degrade_only_text(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    yield from introduced_findings(got.history, got.messages, "the recovered history")  # a cut's half (domain §5.6)
    aligned = align_recovery(got.history, got.messages)
    mask = _visible(got.history)
    after = _visible(got.messages)
    expected = "only visible textual tool_result text is degraded (§4.5)"
    warned = False
    for i, k in aligned.pairs:
        for edit in _text_edits(got.history[i], got.messages[k]):
            if isinstance(edit, str):
                yield Finding.fail(f"messages.{k}.{edit}, and it was changed", expected, code="non-text-edited")
                return
            if not mask[i]:
                yield Finding.fail(
                    f"messages.{k}.content.{edit[0]}: a hidden message's tool result was degraded",
                    expected,
                    code="hidden-degraded",
                )
                return
            if not after[k] and not warned:
                # Allowed (visible in the input), but it frees nothing and loses text: hiding keeps a
                # message whole so that a rewind can show it again (§4.3).
                warned = True
                yield Finding.warn(
                    f"messages.{k}.content.{edit[0]}: the tool result of a message this call hides was degraded",
                    "a message the call hides keeps its text (§4.3, §4.5)",
                    code="degraded-then-hidden",
                )


@check(
    "recover.degraded-shrink",
    op="recover",
    clause="contract §4.5",
    summary="Every degraded tool-result text strictly shrinks, in characters and in tokens, notice included.",
    plan=Plan(
        by_degradable("over-degrade-only") + tuple(pattern("over-hide", "*", d) for d in DEGRADABLE if d != "none")
        + by_degradable("over-stuck") + (pattern("over-none", "*", "dense"),),
        also=by_visible("over-degrade-only"),
        focus=by_degradable("over-degrade-only"),
    ),
    witnesses=(Witness(f"{_R}:NoticeGrows", "chars-grow"),),
)
def degraded_shrink(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    aligned = align_recovery(got.history, got.messages)
    for i, k in aligned.pairs:
        for edit in _text_edits(got.history[i], got.messages[k]):
            if isinstance(edit, str):
                continue
            m, j, old, new = edit
            where = f"messages.{k}.content.{m}.content" + (f".{j}" if j is not None else "")
            # Tokens of the tool_result block as the counter counts it: what the recount sees (§4.5).
            old_tokens = probe.raw_block(got.history[i]["content"][m])
            new_tokens = probe.raw_block(got.messages[k]["content"][m])
            if len(new) >= len(old):
                yield Finding.fail(
                    f"{where}: the degraded text went from {len(old)} to {len(new)} characters",
                    "every edited block strictly shrinks, in characters and in tokens, notice included (§4.5)",
                    code="chars-grow",
                )
                return
            if new_tokens >= old_tokens:
                yield Finding.fail(
                    f"messages.{k}.content.{m}: the degraded tool_result went from {old_tokens} to {new_tokens} "
                    f"tokens ({len(old)} to {len(new)} characters)",
                    "every edited block strictly shrinks, in characters and in tokens, notice included (§4.5)",
                    code="tokens-grow",
                )
                return


@check(
    "recover.progress-or-error",
    op="recover",
    clause="contract §4.6",
    summary="A result without an error strictly lowers the harness's recount; no success-shaped "
    "result without progress.",
    plan=Plan(by_visible("over-none") + by_degradable("over-stuck") + (pattern("reserve-gap"),)),
    witnesses=(Witness(f"{_R}:ZeroProgressSuccess", "recount-unchanged"),),
)
def progress_or_error(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    before = probe.recount(got.history, got.system_prompt)
    if before <= got.allowed:
        return  # within budget: no change is right (recover.within-budget-unchanged)
    after = probe.recount(got.messages, got.system_prompt)
    if after >= before:
        yield Finding.fail(
            f"recover reported success but the recount went from {before} to {after} (allowed {got.allowed}): "
            f"no progress (messagesRemoved {short(got.result.get('messagesRemoved'))})",
            "a success strictly lowers the recount; otherwise a controlled error (§4.6)",
            code="recount-grew" if after > before else "recount-unchanged",
        )


@check(
    "recover.fits-or-converges",
    op="recover",
    clause="contract §4.7",
    summary="recoverSuccess=fits: a success is within budget. converges: applying recover again "
    "reaches the budget or a "
    "controlled error within 3 more calls.",
    policies=("recoverSuccess",),
    plan=Plan(
        (*by_visible("over-stuck"), pattern("over-hide"), pattern("over-degrade-only"), pattern("over-none"),
         pattern("reserve-gap"), pattern("within")),
        also=by_degradable("over-stuck"),
    ),
    witnesses=(Witness(f"{_R}:SucceedsOverBudget", ""),),
)
def fits_or_converges(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None:
        return
    count = probe.recount(got.messages, got.system_prompt)
    if count <= got.allowed:
        return
    if probe.policies.get("recoverSuccess", "fits") != "converges":
        yield Finding.fail(
            f"recover reported success at a recount of {count} tokens against {got.allowed} allowed",
            "a success is within budget (recoverSuccess=fits, §4.7)",
        )
        return
    messages = got.messages
    counts = [count]
    for _ in range(3):
        # totalTokens is recomputed from the new messages by the probe, as the harness always does.
        again = {k: v for k, v in ex.params.items() if k != "totalTokens"} | {"messages": messages}
        step = read_recovery(probe.exchange("recover", again))
        if step.error is not None:
            return
        messages = step.messages
        counts.append(probe.recount(messages, got.system_prompt))
        if counts[-1] <= got.allowed:
            return
    yield Finding.fail(
        f"recover kept succeeding over budget: recounts {' -> '.join(map(str, counts))} against {got.allowed} allowed "
        "after 3 more calls",
        "reach the budget or a controlled error within 3 more calls (recoverSuccess=converges, §4.7)",
    )


@check(
    "recover.error-leaves-input",
    op="recover",
    clause="contract §4.8",
    summary="A controlled error returns the input messages unchanged.",
    plan=Plan(
        (*by_visible("over-stuck"), pattern("over-none"), pattern("allowed<=0"), pattern("over-hide"),
         pattern("over-degrade-only"), pattern("reserve-gap")),
    ),
    witnesses=(Witness(f"{_R}:ErrorKeepsPartialWork", ""),),
)
def error_leaves_input(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None and canon(got.messages) != canon(got.history):
        from ctxmodel.properties.json_reading import first_difference

        where = first_difference(got.history, got.messages, "messages")
        yield Finding.fail(
            f"recover failed ({short(got.error)}) but changed {where}",
            "a controlled error leaves the messages as they were (§4.8)",
        )


@check(
    "recover.error-text",
    op="recover",
    clause="contract §4.8",
    summary='A controlled error\'s text starts with "Context window recovery failed".',
    plan=Plan(EVERY_REGIME),
    witnesses=(Witness(f"{_R}:ErrorTextPlain", ""),),
)
def error_text(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is not None and not got.error.startswith(FAILED_PREFIX):
        yield Finding.fail(f"recover error text is {short(got.error)}", f'an error starting "{FAILED_PREFIX}" (§4.8)')


@check(
    "recover.reported-tokens",
    op="recover",
    clause="contract §4.9",
    summary="newContextTokens agrees with the harness's recount (a warning), and never claims to fit when the recount "
    "does not (a failure).",
    plan=Plan(by_visible("over-hide") + by_visible("over-degrade-only")),
    witnesses=(Witness(f"{_R}:ClaimsToFit", ""),),
)
def reported_tokens(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    reported = got.result.get("newContextTokens")
    if got.error is not None or isinstance(reported, bool) or not isinstance(reported, int):
        return
    count = probe.recount(got.messages, got.system_prompt)
    if reported == count:
        return
    if reported <= got.allowed < count:
        yield Finding.fail(
            f"recover reports newContextTokens {reported} (within {got.allowed} allowed) but the recount is {count}",
            "a target that reports fitting fits by the harness's recount (§4.9)",
        )
    else:
        yield Finding.warn(f"recover reports newContextTokens {reported}; the harness recounts {count}")


@check(
    "recover.gives-up-where-possible",
    op="recover",
    clause="contract §4.8",
    summary="A warning: a controlled error on an input the reference recovers.",
    warning=True,
    plan=Plan(
        by_visible("over-hide") + by_visible("over-degrade-only"),
        also=by_degradable("over-hide") + by_degradable("over-degrade-only"),
    ),
    witnesses=(Witness(f"{_R}:GivesUp", "", "warn"),),
)
def gives_up_where_possible(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    got = read_recovery(ex)
    if got.error is None or got.allowed <= 0:
        return
    if probe.recount(got.history, got.system_prompt) <= got.allowed:
        return  # recover.within-budget-unchanged judges that
    # The one judge that asks the reference, by design: "where the reference recovers" (contract §4.8).
    from ctxmodel.recover import recover

    reference = recover(
        codec.load(got.history),
        context_window=int(ex.params["contextWindow"]),
        max_tokens=int(ex.params.get("maxTokens", 0)),
        system_prompt=got.system_prompt,
        counter=probe.tokenizer,
        new_id=lambda: "reference-probe",
    )
    if reference.error is None:
        yield Finding.warn(
            f"gave up where recovery was possible: the reference brings {reference.prev_context_tokens} tokens to "
            f"{reference.new_context_tokens} (allowed {got.allowed})"
        )


def _turns(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """An over-budget request, then what an agent does next, one to three times: append a turn (a
    call and its results, or a text exchange) or nothing, and recover again (domain §3.5: the agents
    call recovery again and again on its own output)."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import texts

    result = st.builds(
        lambda size, body: body[:size] or "ok",
        st.sampled_from((40, 400, 1500, 4000)),
        texts(min_size=40, max_size=4000, kinds=("prose", "code")),
    )
    turn = st.one_of(
        st.none(),
        st.fixed_dictionaries({"calls": st.integers(1, 2), "results": st.lists(result, min_size=2, max_size=2)}),
        st.fixed_dictionaries({"say": texts(min_size=1, max_size=300), "reply": texts(min_size=1, max_size=300)}),
    )
    return st.builds(lambda request, then: {**request, "then": then}, plan_params(SEQUENTIAL_PLAN)(policies),
                     st.lists(turn, min_size=1, max_size=3))


def _appended(messages: list[Msg], turn: Mapping[str, Any] | None, round_no: int) -> list[Msg]:
    if turn is None:
        return messages
    if "say" in turn:
        return [*messages, {"role": "assistant", "content": turn["say"]}, {"role": "user", "content": turn["reply"]}]
    ids = [f"toolu_seq{round_no}_{k}" for k in range(int(turn["calls"]))]
    uses = [{"type": "tool_use", "id": i, "name": "read_file", "input": {"path": f"src/f{k}.py"}}
            for k, i in enumerate(ids)]
    results = [{"type": "tool_result", "tool_use_id": i, "content": turn["results"][k % 2]} for k, i in enumerate(ids)]
    return [*messages, {"role": "assistant", "content": uses}, {"role": "user", "content": results}]


def _sequence_call(probe: Probe, params: dict[str, Any]) -> Exchange:
    first = probe.exchange("recover", {k: v for k, v in params.items() if k != "then"})
    return attrs.evolve(first, params=params)


@check(
    "recover.sequential",
    op="recover",
    clause="contract §4",
    summary="Recovery applied again and again, to its own output with turns appended in between (as the agents "
    "call it), keeps every promise of contract §4 at every call, judged by the single-call recover checks.",
    params=_turns,
    call=_sequence_call,
    # Recovery applied to its own output: every over-budget regime (the turns appended decide the rest).
    plan=SEQUENTIAL_PLAN,
    # a bug only a second call reaches: the marker of the first truncation is tagged by the second
    witnesses=(Witness("python:tests.targets.broken_loop_marker", "tagging-rules/tagged-marker"),),
)
def sequential(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    judges = sorted(
        (p for p in registered().values() if p.op == "recover" and not p.warning and p.id != "recover.sequential"),
        key=lambda p: p.id,
    )
    base = {k: v for k, v in ex.params.items() if k not in ("then", "messages")}
    exchange = attrs.evolve(ex, params={k: v for k, v in ex.params.items() if k != "then"})
    turns: list[Any] = list(ex.params.get("then") or [])
    for round_no in range(len(turns) + 1):
        for prop in judges:
            for finding in prop.check(probe, exchange):
                if finding.severity != "fail":
                    continue
                if round_no == 0:
                    return  # the single-call property reports it; this one judges what follows
                yield Finding.fail(
                    f"at call {round_no + 1} of a sequence ({prop.id}): {finding.message}",
                    finding.expected,
                    code=f"{prop.id.removeprefix('recover.')}/{finding.code}" if finding.code
                    else prop.id.removeprefix("recover."),
                )
                return
        if round_no == len(turns):
            return
        got = read_recovery(exchange)
        messages = got.messages if got.error is None else got.history
        params = {**base, "messages": _appended(codec.copy_json(messages), turns[round_no], round_no)}
        exchange = probe.exchange("recover", params)
