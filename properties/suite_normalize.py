"""Properties of ``normalize`` (contract §3, rules 1-7 and the declared policies).

Judged on ``normalize_histories()``: stored histories whose turns hold the §3 defects alone and in
pairs, and a share of ``histories()`` with every broken shape of the field, because normalization
exists to repair them. Rule 8 says other defects pass through, so nothing here asks a
target to repair anything but pairing, and nothing here asks for the reference's own choices (which
duplicate is kept, result order unless declared, the synthetic text, the ``Tool result:``
serialization of list content, whether an emptied message is removed or kept holding synthetic
results). Each property judges one rule; ``ctxmodel.properties.json_reading`` computes what the
rule requires from the input alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check, declare_op
from ctxmodel.properties.json_reading import (
    NormalizePlan,
    align,
    assistant_index,
    btype,
    canon,
    first_difference,
    is_empty,
    leading_results,
    messages_of,
    plan_normalize,
    result_payload,
    result_texts,
    results_after,
    short,
    synthetic_marked,
    use_ids,
)
from ctxmodel.properties.yardsticks import effective, visible_mask
from ctxmodel.tokens.jsjson import js_string

Msg = dict[str, Any]


def _histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """Stored histories whose turns each hold a cell of ``ctxmodel.partition``'s normalize partition
    (a clean turn, one §3 defect alone, two together), drawn cell first; one in four are plain
    ``histories()``, every broken shape of the field."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import normalize_histories

    return st.builds(lambda messages: {"messages": messages}, normalize_histories())


def _normalized(ex: Exchange) -> tuple[list[Msg], list[Msg], NormalizePlan]:
    """The visible messages of the input and of the output, and what §3 requires of them: the rules
    are judged on what is sent (contract §3), adjacency taken between visible messages, so what a
    target does with hidden messages is ``normalize.keeps-hidden``'s to judge."""
    history: list[Msg] = effective(ex.params["messages"] if ex.judged is None else ex.judged)
    out = effective(messages_of(ex.result, "normalize"))
    return history, out, plan_normalize(history)


def _policy(probe: Probe, key: str, default: str) -> str:
    return str(probe.policies.get(key, default))


def _decides(msg: Mapping[str, Any]) -> bool:
    return msg.get("isSummary") is True or msg.get("isTruncationMarker") is True


def _escapings(text: str) -> set[str]:
    """A text item as it may read inside a serialized list (contract §3.4 lets list content be
    serialized any way that keeps each item's text): verbatim, or as the body of a JSON string --
    the reference writes compact JSON (newlines as ``\\n``), a Node target ``JSON.stringify``."""
    return {text, js_string(text)[1:-1], json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}


def conversion_holds(text_block: Mapping[str, Any], result: Mapping[str, Any]) -> bool:
    """A ``Tool result:`` text holds a result: string content verbatim, each text item of list
    content in some serialization of it (contract §3.4)."""
    text = text_block.get("text", "")
    if not isinstance(text, str):
        return False
    if isinstance(result.get("content"), str):
        return result["content"] in text
    return all(any(form in text for form in _escapings(t)) for t in result_texts(result))


#: The broken normalize targets (``tests/targets/broken_normalize.py``), one bug each.
_N = "python:tests.targets.broken_normalize"

declare_op("normalize", params=_histories, purity_witnesses=(
    Witness("python:tests.targets.broken_ops:RemembersToolUses", "answers-differently"),
    Witness("python:tests.targets.broken_ops:MutatesInput", "mutates-input"),
))




@check(
    "normalize.results-lead",
    op="normalize",
    clause="contract §3.1",
    summary="After every assistant tool_use message (but the last), the next message is a user message that "
    "starts with exactly one tool_result per tool_use id.",
    witnesses=(
        Witness(f"{_N}:ResultsSplit", "result-after-text"),
        Witness(f"{_N}:LeavesLateDuplicate", "late-result-after-text"),
    ),
)
def results_lead(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, _ = _normalized(ex)
    expected = "the next message is a user message starting with exactly one tool_result per tool_use id (§3.1)"
    for k, msg in enumerate(out[:-1]):
        ids = use_ids(msg)
        if not ids:
            continue
        nxt = out[k + 1]
        if nxt.get("role") != "user":
            yield Finding.fail(
                f"messages.{k} has tool_use {', '.join(ids)} but messages.{k + 1} is an assistant message: "
                "its results are nowhere",
                expected,
                code="results-missing-next-assistant",
            )
            return
        lead = Counter(b.get("tool_use_id") for b in leading_results(nxt))
        content = nxt.get("content")
        blocks = content if isinstance(content, list) else []
        for tool_id in ids:
            if lead[tool_id] == 1:
                continue
            if lead[tool_id] > 1:
                yield Finding.fail(
                    f"messages.{k + 1} starts with {lead[tool_id]} tool_results for {tool_id}",
                    expected,
                    code="duplicate-result",
                )
                return
            later = [m for m, b in enumerate(blocks) if btype(b) == "tool_result" and b.get("tool_use_id") == tool_id]
            if later:
                m = later[0]
                kind = btype(blocks[m - 1]) if m > 0 else "?"
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: the tool_result for {tool_id} (messages.{k}) comes after "
                    f"{'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind} block, so the API finds no result for it "
                    "at the start of the message",
                    expected,
                    code=f"result-after-{kind}",
                )
            else:
                yield Finding.fail(
                    f"messages.{k + 1}: no tool_result for {tool_id} of messages.{k} "
                    f"(it starts with {short(nxt.get('content'), 120)})",
                    expected,
                    code="result-missing" if isinstance(nxt.get("content"), list) else "result-missing-string-content",
                )
            return
        strays = [i for i in lead if i not in ids]
        if strays:
            yield Finding.fail(
                f"messages.{k + 1} starts with a tool_result for {strays[0]}, which is not a tool_use of messages.{k}",
                expected,
                code="stray-result",
            )
            return
        # "...then its other blocks": a tool_result after the leading run is one the API rejects
        # (results must come first, domain §5.1) whatever its id — a duplicate or an orphan left
        # in place.
        for m in range(sum(lead.values()), len(blocks)):
            if btype(blocks[m]) == "tool_result":
                kind = btype(blocks[m - 1])
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: a tool_result for {blocks[m].get('tool_use_id')} comes after "
                    f"{'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind} block: the API requires tool_result "
                    "blocks first, and this one is neither in the leading run nor removed",
                    expected,
                    code=f"late-result-after-{kind}",
                )
                return


@check(
    "normalize.result-order",
    op="normalize",
    clause="contract §3 policies (resultOrder)",
    summary="With resultOrder=tool_use, the leading results follow the order of the tool_use blocks.",
    policies=("resultOrder",),
    witnesses=(Witness(f"{_N}:ResultOrderReversed", ""),),
)
def result_order(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    if _policy(probe, "resultOrder", "any") != "tool_use":
        return
    _, out, _ = _normalized(ex)
    for k, msg in enumerate(out[:-1]):
        ids = use_ids(msg)
        if len(ids) < 2 or out[k + 1].get("role") != "user":
            continue
        got: list[str] = []
        for b in leading_results(out[k + 1]):
            tool_id = b.get("tool_use_id")
            if tool_id in ids and tool_id not in got:
                got.append(tool_id)
        want = [i for i in ids if i in got]
        if got != want:
            yield Finding.fail(
                f"messages.{k + 1}: results in the order {', '.join(got)}, but messages.{k} calls {', '.join(want)}",
                "results in tool_use order (resultOrder=tool_use, which Bedrock reportedly requires)",
            )
            return


@check(
    "normalize.valid-results-kept",
    op="normalize",
    clause="contract §3.2",
    summary="A result that was valid in the input is kept for its id with its content and is_error unchanged.",
    witnesses=(Witness(f"{_N}:EditsValidResult", ""),),
)
def valid_results_kept(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    where = assistant_index(out)
    expected = "one of the valid results for that id kept, content and is_error unchanged (§3.2)"
    for tool_id, entries in plan.valid.items():
        src, b_index, block = entries[0]
        k = where.get(tool_id)
        if k is None:
            yield Finding.fail(
                f"the tool_use {tool_id} is gone from the output, and with it its valid result "
                f"(input messages.{src}.content.{b_index})",
                expected,
            )
            return
        got = results_after(out, k, tool_id)
        want = plan.payloads(tool_id, loose=False)
        if any(result_payload(b) in want for _, b in got):
            continue
        if not got:
            yield Finding.fail(
                f"the valid result for {tool_id} (input messages.{src}.content.{b_index}) was dropped: "
                f"messages.{k + 1} holds no tool_result for it",
                expected,
            )
        else:
            m, b = got[0]
            yield Finding.fail(
                f"messages.{k + 1}.content.{m}: the result for {tool_id} is {short(b.get('content'))} "
                f"(is_error {b.get('is_error')!r}), not the valid one of input messages.{src}.content.{b_index}: "
                f"{short(block.get('content'))} (is_error {block.get('is_error')!r})",
                expected,
            )
        return


@check(
    "normalize.no-relabel",
    op="normalize",
    clause="contract §3.2, §3.4",
    summary="A valid result is never moved to another id; an orphan takes an id only under orphans=relabel, and only "
    "one of the previous message's calls that has no valid result.",
    policies=("orphans",),
    witnesses=(Witness(f"{_N}:PositionalRemap", ""),),
)
def no_relabel(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    policy = _policy(probe, "orphans", "drop")
    owners: dict[str, set[str]] = {}
    for table in (plan.valid, plan.loose):
        for tool_id, entries in table.items():
            for _, _, block in entries:
                owners.setdefault(result_payload(block), set()).add(tool_id)
    orphans_by_payload: dict[str, list[Any]] = {}
    for orphan in plan.orphans:
        orphans_by_payload.setdefault(result_payload(orphan.result), []).append(orphan)
    for tool_id, k in assistant_index(out).items():
        if tool_id in plan.ambiguous:
            continue
        for m, block in results_after(out, k, tool_id):
            payload = result_payload(block)
            if payload in plan.payloads(tool_id):
                continue
            if tool_id not in plan.valid and synthetic_marked(block):
                continue  # a synthetic result: normalize.synthetic-marked judges it
            src = plan.use_source.get(tool_id)
            hits = orphans_by_payload.get(payload, [])
            if policy == "relabel" and tool_id not in plan.valid and src is not None and any(
                plan.position.get(o.source) == plan.position.get(src, -2) + 1 for o in hits
            ):
                continue  # an allowed relabel (payloads of different results may coincide)
            others = sorted(owners.get(payload, set()) - {tool_id})
            if others:
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: the valid result of {others[0]} now answers {tool_id}",
                    "a valid result is never moved to another id (§3.2)",
                )
                return
            if not hits:
                continue
            orphan = hits[0]
            where = f"the orphan of input messages.{orphan.source}.content.{orphan.block} (id {orphan.id})"
            if tool_id in plan.valid:
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: {where} took the id {tool_id}, which has a valid result",
                    "an orphan never takes the id of a call that has a valid result (§3.4)",
                )
                return
            if policy != "relabel":
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: {where} was relabelled as the result of {tool_id} "
                    f"though orphans={policy}",
                    f"orphans {'dropped' if policy == 'drop' else 'dropped or turned to text'} "
                    f"(orphans={policy}, §3.4)",
                )
                return
            yield Finding.fail(
                f"messages.{k + 1}.content.{m}: {where} was relabelled as {tool_id}, a call of another turn",
                "relabel only onto a tool_use of the message right before the orphan (§3.4)",
            )
            return


@check(
    "normalize.synthetic-marked",
    op="normalize",
    clause="contract §3.3",
    summary="A missing result gets a synthetic one that is non-empty and marked (is_error: true and/or text "
    'containing "interrupt").',
    policies=("orphans", "trailing"),
    witnesses=(Witness(f"{_N}:UnmarkedSynthetic", "synthetic-not-marked"),),
)
def synthetic_marked_prop(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    relabel = _policy(probe, "orphans", "drop") == "relabel"
    for tool_id, k in assistant_index(out).items():
        if tool_id in plan.ambiguous or tool_id in plan.valid or k == len(out) - 1:
            continue
        got = results_after(out, k, tool_id)
        if not got:
            continue  # normalize.results-lead reports it
        m, block = got[0]
        if synthetic_marked(block) or result_payload(block) in plan.payloads(tool_id):
            continue
        src = plan.use_source.get(tool_id)
        if relabel and src is not None and any(
            result_payload(o.result) == result_payload(block)
            and plan.position.get(o.source) == plan.position.get(src, -2) + 1
            for o in plan.orphans
        ):
            continue
        expected = 'a non-empty result marked by is_error: true and/or text containing "interrupt" (§3.3)'
        if any(result_payload(other) == result_payload(block) for other in plan.all_results()):
            yield Finding.fail(
                f"messages.{k + 1}.content.{m}: {tool_id} had no result, and got another call's real result "
                f"relabelled to it (content {short(block.get('content'))}), not a synthetic one",
                expected,
                code="relabelled-result",
            )
            return
        what = "empty" if not "".join(result_texts(block)).strip() else "not marked"
        yield Finding.fail(
            f"messages.{k + 1}.content.{m}: the synthetic result for {tool_id} (it had no result) is {what}: "
            f"content {short(block.get('content'))}, is_error {block.get('is_error')!r}",
            expected,
            code=f"synthetic-{what.replace(' ', '-')}",
        )
        return


@check(
    "normalize.synthetic-only-where-missing",
    op="normalize",
    clause="contract §3.2, §3.3",
    summary="Synthetic results appear only for calls that had no valid result.",
    witnesses=(Witness(f"{_N}:SynthesizesOverValid", ""),),
)
def synthetic_only_where_missing(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    where = assistant_index(out)
    for tool_id, entries in plan.valid.items():
        k = where.get(tool_id)
        if k is None:
            continue
        want = plan.payloads(tool_id, loose=False)
        for m, block in results_after(out, k, tool_id):
            if result_payload(block) not in want and synthetic_marked(block):
                src, b_index, _ = entries[0]
                yield Finding.fail(
                    f"messages.{k + 1}.content.{m}: a synthetic result for {tool_id}, which had a valid result "
                    f"at input messages.{src}.content.{b_index}",
                    "synthetic results only for calls without a valid result (§3.3)",
                )
                return


@check(
    "normalize.orphans-per-policy",
    op="normalize",
    clause="contract §3.4",
    summary="No orphan result is left; orphans are dropped, turned to 'Tool result:' text where they stood, or "
    "relabelled, as the orphans policy declares.",
    policies=("orphans",),
    witnesses=(Witness(f"{_N}:DropsDeclaredToText", ""),),
)
def orphans_per_policy(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    policy = _policy(probe, "orphans", "drop")
    for k, msg in enumerate(out):
        if msg.get("role") != "user":
            continue
        allowed = set(use_ids(out[k - 1])) if k > 0 else set()
        content = msg.get("content")
        for m, block in enumerate(content if isinstance(content, list) else []):
            if btype(block) == "tool_result" and block.get("tool_use_id") not in allowed:
                before = f"messages.{k - 1}" if k > 0 else "a previous message (it is the first)"
                yield Finding.fail(
                    f"messages.{k}.content.{m}: tool_result {block.get('tool_use_id')} is an orphan: "
                    f"no tool_use {block.get('tool_use_id')} in {before}",
                    f"every orphan result handled (orphans={policy}, §3.4)",
                )
                return
    alignment = align(plan, out)
    extras = list(alignment.extras)
    if policy == "drop" and extras:
        e = extras[0]
        yield Finding.fail(
            f"messages.{e.message}.content.{e.block}: a result was turned to text though orphans=drop: "
            f"{short(e.value.get('text'))}",
            "orphans dropped (orphans=drop, §3.4)",
        )
        return
    if policy == "to_text":
        for orphan in plan.orphans:
            if orphan.optional:
                continue
            home = alignment.mapping.get(orphan.source)
            found = None
            for i, extra in enumerate(extras):
                if home is not None:
                    placed = extra.message == home and extra.before == orphan.before
                else:
                    placed = extra.before is None
                if placed and conversion_holds(extra.value, orphan.result):
                    found = i
                    break
            if found is None:
                place = "in the output"
                if home is not None:
                    place = f"in messages.{home}, after {orphan.before} of its other blocks"
                yield Finding.fail(
                    f"input messages.{orphan.source}.content.{orphan.block}: the orphan {orphan.id} "
                    f"({short(orphan.result.get('content'))}) is not a 'Tool result:' text {place}",
                    "a text block starting 'Tool result:' holding its content, where the result was among the "
                    "other blocks (orphans=to_text, §3.4)",
                )
                return
            extras.pop(found)
    results = list(plan.all_results())
    for extra in extras:
        if not any(conversion_holds(extra.value, r) for r in results):
            yield Finding.fail(
                f"messages.{extra.message}.content.{extra.block}: a 'Tool result:' text that holds no input "
                f"result: {short(extra.value.get('text'))}",
                "a turned-to-text orphan holds the orphan's content (§3.4)",
            )
            return


@check(
    "normalize.duplicate-ids",
    op="normalize",
    clause="contract §3.5",
    summary="A tool_use id used earlier in the request: the later tool_use is removed, so every id occurs once.",
    witnesses=(Witness(f"{_N}:KeepsDuplicateToolUses", ""),),
)
def duplicate_ids(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    places: dict[str, list[str]] = {}
    for k, msg in enumerate(out):
        if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
            continue
        for m, block in enumerate(msg["content"]):
            if btype(block) == "tool_use" and str(block.get("id")) not in plan.ambiguous:
                places.setdefault(str(block.get("id")), []).append(f"messages.{k}.content.{m}")
    for tool_id, where in places.items():
        if len(where) > 1:
            yield Finding.fail(
                f"tool_use id {tool_id} occurs {len(where)} times: {where[0]} and {where[1]}",
                "the later tool_use of a repeated id removed (§3.5)",
            )
            return
    blocks = {
        str(b.get("id")): b
        for msg in out
        if msg.get("role") == "assistant" and isinstance(msg.get("content"), list)
        for b in msg["content"]
        if btype(b) == "tool_use"
    }
    for tool_id, first in plan.duplicated.items():
        kept = blocks.get(tool_id)
        if kept is not None and canon(kept) != canon(first):
            yield Finding.fail(
                f"{places[tool_id][0]}: for the repeated id {tool_id} the later tool_use was kept "
                f"({short(kept)}), not the first ({short(first)})",
                "the first tool_use of an id kept, the later removed (§3.5)",
            )
            return


@check(
    "normalize.keeps-other-content",
    op="normalize",
    clause="contract §3.1, §3.6, §3.8",
    summary="Everything but pairing is kept: other blocks in their original order (thinking first), string content, "
    "images, unknown blocks, defects and metadata keys.",
    witnesses=(Witness(f"{_N}:StripsMetadata", ""), Witness(f"{_N}:MergesKeepingTheLastKeys", "")),
)
def keeps_other_content(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history, out, plan = _normalized(ex)
    alignment = align(plan, out)
    expected = "every block but tool results kept in its message, in order, and every metadata key kept (§3.6)"
    if alignment.problems:
        yield Finding.fail(alignment.problems[0], expected)
        return
    for src, k in alignment.mapping.items():
        for key, value in history[src].items():
            if key in ("role", "content"):
                continue
            if key not in out[k] or canon(out[k][key]) != canon(value):
                got = short(out[k][key]) if key in out[k] else "nothing"
                yield Finding.fail(
                    f"messages.{k}.{key} is {got}; input messages.{src}.{key} was {short(value)}",
                    expected,
                )
                return


@check(
    "normalize.no-empty-messages",
    op="normalize",
    clause="contract §3.6, §3.8",
    summary="No message that had content is left empty (a message normalization empties is removed), and a message "
    "that was already empty passes through.",
    witnesses=(Witness(f"{_N}:LeavesEmptiedMessages", ""), Witness(f"{_N}:DropsAlreadyEmpty", "")),
)
def no_empty_messages(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history, out, _ = _normalized(ex)
    # A visible summary or marker decides what is hidden: it stays even when normalization empties
    # it (contract §3), so it is not counted either way.
    before = [i for i, m in enumerate(history) if is_empty(m) and not _decides(m)]
    empty = [k for k, m in enumerate(out) if is_empty(m) and not _decides(m)]
    if len(empty) > len(before):
        yield Finding.fail(
            f"messages.{empty[-1]} ({out[empty[-1]].get('role')}) has no content; the input had {len(before)} "
            f"empty message(s) and the output has {len(empty)}",
            "a message normalization empties is removed (§3.6); only already-empty messages pass through (§3.8)",
        )
        return
    # An empty user message right after a call may take its results (§3.3), so only the others must
    # come out empty: pairing has no business with them, and the oracle reports them (§3.8).
    untouched = [i for i in before if not (history[i].get("role") == "user" and i and use_ids(history[i - 1]))]
    if len(empty) < len(untouched):
        where = ", ".join(f"messages.{i} ({history[i].get('role')})" for i in untouched[:3])
        yield Finding.fail(
            f"the input had {len(untouched)} already-empty message(s) pairing cannot fill ({where}"
            f"{', ...' if len(untouched) > 3 else ''}) and the output has {len(empty)} empty message(s)",
            "a message that was already empty passes through unchanged, for the oracle to report (§3.8)",
        )


@check(
    "normalize.idempotent",
    op="normalize",
    clause="contract §3.7",
    summary="Normalizing the output again changes nothing.",
    policies=("orphans", "trailing"),
    witnesses=(Witness(f"{_N}:NotIdempotent", ""),),
)
def idempotent(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    full = messages_of(ex.result, "normalize")
    out = effective(full)
    again = effective(messages_of(probe.call("normalize", {"messages": full}), "normalize"))
    if canon(again) != canon(out):
        where = first_difference(out, again, "messages") or "messages"
        yield Finding.fail(
            f"normalizing the output again changed {where}",
            "normalize(normalize(H)) == normalize(H) (§3.7)",
        )


@check(
    "normalize.trailing-per-policy",
    op="normalize",
    clause="contract §3 policies (trailing)",
    summary="A last assistant message with tool_use is left alone (trailing=leave) or gets synthetic results "
    "(trailing=close).",
    policies=("trailing",),
    witnesses=(Witness(f"{_N}:ClosesDeclaredLeave", ""),),
)
def trailing_per_policy(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    _, out, plan = _normalized(ex)
    if not plan.trailing:
        return
    policy = _policy(probe, "trailing", "leave")
    k = assistant_index(out).get(plan.trailing[0])
    if k is None:
        return  # normalize.keeps-other-content reports a lost tool_use
    if policy == "leave" and k != len(out) - 1:
        yield Finding.fail(
            f"messages.{k + 1} follows the trailing tool_use of messages.{k} though trailing=leave",
            "the last assistant message's calls left pending, nothing added after it (trailing=leave)",
        )
    elif policy == "close" and k == len(out) - 1:
        yield Finding.fail(
            f"messages.{k}: the trailing tool_use {plan.trailing[0]} got no results though trailing=close",
            "a user message with synthetic results after it (trailing=close, §3.3)",
        )


@check(
    "normalize.keeps-hidden",
    op="normalize",
    clause="contract §3",
    summary="Hidden messages are the target's own business, but none is deleted or un-hidden, and the visible "
    "messages that decide what is hidden (the last summary, the markers) are kept.",
    witnesses=(Witness(f"{_N}:SendsOnlyVisible", "hidden-lost"),),
)
def keeps_hidden(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history: list[Msg] = ex.params["messages"]
    full = messages_of(ex.result, "normalize")
    mask, out_mask = visible_mask(history), visible_mask(full)
    expected = "hidden messages neither deleted nor shown, the summary and markers kept (§3)"
    deciders = [m for m, v in zip(history, mask, strict=True) if v and _decides(m)]
    for m in deciders:
        field = "condenseId" if m.get("isSummary") is True else "truncationId"
        key = (field, m.get(field))
        if not any(o.get(key[0]) == key[1] and _decides(o) for o in full):
            yield Finding.fail(
                f"the visible {'summary' if key[0] == 'condenseId' else 'truncation marker'} with {key[0]} "
                f"{short(key[1])} is gone from the output",
                expected,
                code="decider-removed",
            )
            return
    hidden_in, hidden_out = mask.count(False), out_mask.count(False)
    if hidden_out < hidden_in:
        yield Finding.fail(
            f"the input has {hidden_in} hidden message(s), the output {hidden_out}: hidden messages were deleted "
            "or shown again",
            expected,
            code="hidden-lost",
        )
