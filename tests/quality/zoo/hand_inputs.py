"""Hand-written inputs for the zoo variants added with the families table (``families.py``).

For every new variant, one input (``HAND_INPUTS[name]``) on which the variant's output breaks the clause
its ``CLAUSE`` names while the reference's does not (and neither does ``_field.FieldRecovery``, the
correct code the recovery variants override one method of). The clause checks below are written by
hand from contract §2-§4, judged with the reference visibility predicate and counter (contract §2,
§5); they are not the gate's properties. No Hypothesis, a few seconds:

    .venv/bin/python -m tests.quality.zoo.hand_inputs
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from ctxmodel import codec
from ctxmodel.targets import reference
from ctxmodel.tokens import get_counter
from ctxmodel.visibility import visible_mask
from tests.quality.zoo._common import FieldNormalizer
from tests.quality.zoo._field import FieldRecovery

Json = dict[str, Any]
Op = Callable[[Json], Json]
C = get_counter("zoo")
PROSE = "The quick brown fox jumps over the lazy dog while the build log scrolls past. "
DENSE = "鬱龘靐齉"  # two tokens per character: text that frees tokens in fewer characters than a notice


# -- building histories ------------------------------------------------------------------------


def user(content: Any, **meta: Any) -> Json:
    return {"role": "user", "content": content, **meta}


def assistant(content: Any, **meta: Any) -> Json:
    return {"role": "assistant", "content": content, **meta}


def use(tid: str, **inputs: Any) -> Json:
    return {"type": "tool_use", "id": tid, "name": "read_file", "input": inputs or {"path": f"{tid}.py"}}


def result(tid: str, content: Any) -> Json:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def prose(chars: int) -> str:
    return (PROSE * (chars // len(PROSE) + 1))[:chars]


def dense(chars: int) -> str:
    return (DENSE * (chars // len(DENSE) + 1))[:chars]


def summary(cid: str, role: str = "user") -> Json:
    return {"role": role, "content": [{"type": "text", "text": "## Conversation Summary\nWe fixed the parser."}],
            "isSummary": True, "condenseId": cid}


def marker(tid: str) -> Json:
    return user("[Sliding window truncation: 2 messages hidden to reduce context]", isTruncationMarker=True,
                truncationId=tid)


def recount(messages: list[Json], system: str = "") -> int:
    """Contract §4's count: the system prompt plus the effective history, by the reference counter."""
    history = codec.load(messages)
    shown = [m for m, keep in zip(history, visible_mask(history), strict=True) if keep]
    return int(C.count_text(system)) + int(C.count_messages(shown))


def with_total(params: Json) -> Json:
    """``totalTokens`` as the harness sends it: the recount less the last visible message's own count."""
    history = codec.load(params["messages"])
    shown = [m for m, keep in zip(history, visible_mask(history), strict=True) if keep]
    last = int(C.count_messages(shown[-1:]))
    return dict(params, totalTokens=recount(params["messages"], params.get("systemPrompt", "")) - last)


def budget(messages: list[Json], allowed: int, system: str = "") -> Json:
    """Recover params whose contract budget ``floor(0.9 W) - maxTokens`` is exactly ``allowed``."""
    window = (10 * (allowed + 1)) // 9
    while (9 * window) // 10 < allowed + 1:
        window += 1
    max_tokens = (9 * window) // 10 - allowed
    return with_total({"messages": messages, "contextWindow": window, "maxTokens": max_tokens, "systemPrompt": system})


def over_by(messages: list[Json], tokens: int, system: str = "") -> Json:
    return budget(messages, recount(messages, system) - tokens, system)


def allowed_of(params: Json) -> int:
    reserve = params["maxTokens"] if params["maxTokens"] > 0 else 8192
    allowed: int = (9 * params["contextWindow"]) // 10 - reserve
    return allowed


# -- the clause checks, by hand ----------------------------------------------------------------


def _ok(out: Json) -> bool:
    return out.get("error") is None


def check_progress(params: Json, out: Json, op: Op) -> list[str]:
    """§4 rule 6: over budget, a result without an error strictly lowers the recount (rule 2 covers the rest)."""
    system = params.get("systemPrompt", "")
    before, after = recount(params["messages"], system), recount(out["messages"], system)
    if _ok(out) and before > allowed_of(params) and after >= before:
        return [f"success without progress: {before} -> {after} tokens (§4.6)"]
    return []


def check_fits(params: Json, out: Json, op: Op, policy: str = "fits") -> list[str]:
    """§4 rule 7: ``fits`` — a success is within budget; ``converges`` — within budget or an error within 3 more."""
    system, allowed = params.get("systemPrompt", ""), allowed_of(params)
    if not _ok(out) or recount(out["messages"], system) <= allowed:
        return []
    if policy == "fits":
        return [f"success at {recount(out['messages'], system)} > {allowed} allowed (§4.7)"]
    current = out
    for _ in range(3):
        current = op(with_total(dict(params, messages=current["messages"])))
        if not _ok(current) or recount(current["messages"], system) <= allowed:
            return []
    return [f"3 more calls all succeed, still {recount(current['messages'], system)} > {allowed} allowed (§4.7)"]


def check_converges(params: Json, out: Json, op: Op) -> list[str]:
    return check_fits(params, out, op, "converges")


def _new_markers(before: list[Json], after: list[Json]) -> list[int]:
    old = {m.get("truncationId") for m in before if m.get("isTruncationMarker")}
    return [i for i, m in enumerate(after) if m.get("isTruncationMarker") and m.get("truncationId") not in old]


def _block_tokens(block: Json) -> int:
    return int(C.count_blocks([codec.load_block(block, "block")]))


def check_degradation(params: Json, out: Json, op: Op) -> list[str]:
    """§4 rule 5: only visible textual tool-result text edited, each edited text and block strictly smaller."""
    if not _ok(out):
        return []
    before = params["messages"]
    drop = set(_new_markers(before, out["messages"]))
    after = [m for i, m in enumerate(out["messages"]) if i not in drop]
    if len(after) != len(before):
        return ["messages added or deleted"]
    shown_before = visible_mask(codec.load(before))
    kept = [i for i in range(len(out["messages"])) if i not in drop]
    shown_after_all = visible_mask(codec.load(out["messages"]))
    shown_after = [shown_after_all[i] for i in kept]
    problems: list[str] = []
    for n, (a, b) in enumerate(zip(before, after, strict=True)):
        if a.get("content") == b.get("content"):
            continue
        if not (shown_before[n] and shown_after[n]):
            problems.append(f"hidden message {n} edited (§4.5)")
            continue
        if not (isinstance(a.get("content"), list) and isinstance(b.get("content"), list)):
            problems.append(f"message {n}: content replaced (§4.5)")
            continue
        for k, (x, y) in enumerate(zip(a["content"], b["content"], strict=False)):
            if x == y:
                continue
            if x.get("type") != "tool_result" or {**x, "content": None} != {**y, "content": None}:
                problems.append(f"messages.{n}.content.{k}: not a tool_result text edit (§4.5)")
                continue
            texts = (
                [(x["content"], y["content"])]
                if isinstance(x["content"], str)
                else [
                    (i.get("text"), j.get("text"))
                    for i, j in zip(x["content"], y["content"], strict=False)
                    if i != j
                ]
            )
            for old, new in texts:
                if not (isinstance(old, str) and isinstance(new, str)) or len(new) >= len(old):
                    problems.append(f"messages.{n}.content.{k}: text {len(old)} -> {len(new)} chars (§4.5)")
            if _block_tokens(y) >= _block_tokens(x):
                tokens = f"{_block_tokens(x)} -> {_block_tokens(y)} tokens"
                problems.append(f"messages.{n}.content.{k}: block {tokens} (§4.5)")
    return problems


def _issues(request: list[Json]) -> Counter[tuple[str, str]]:
    """§3 rules 1 and 4 as an API sees them: calls without leading results, results without the call before."""
    found: Counter[tuple[str, str]] = Counter()
    for i, m in enumerate(request):
        content: list[Any] = c if isinstance(c := m.get("content"), list) else []
        if m.get("role") == "assistant" and i + 1 < len(request):
            nxt = request[i + 1]
            leading: set[str] = set()
            if nxt.get("role") == "user" and isinstance(nxt.get("content"), list):
                for block in nxt["content"]:
                    if block.get("type") != "tool_result":
                        break
                    leading.add(block.get("tool_use_id"))
            for block in content:
                if block.get("type") == "tool_use" and block.get("id") not in leading:
                    found[("missing", block.get("id"))] += 1
        prev = request[i - 1] if i else None
        calls = (
            {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"}
            if m.get("role") == "user" and prev is not None and prev.get("role") == "assistant"
            and isinstance(prev.get("content"), list)
            else set()
        )
        for block in content:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in calls:
                found[("unexpected", block.get("tool_use_id"))] += 1
    return found


def _request(messages: list[Json]) -> list[Json]:
    return [m for m, keep in zip(messages, visible_mask(codec.load(messages)), strict=True) if keep]


def check_pairing(params: Json, out: Json, op: Op) -> list[str]:
    """§4 rule 4: no pairing violation in the result's request that the input's request did not have."""
    if not _ok(out):
        return []
    new = _issues(_request(out["messages"])) - _issues(_request(params["messages"]))
    return [f"new violation: {rule} {tid} (§4.4)" for (rule, tid) in sorted(new)]


def check_results_lead(params: Json, out: Json, op: Op) -> list[str]:
    """§3 rule 1: after an assistant message with calls (not the last), the next user message starts with one
    result per call id, then its other blocks."""
    problems: list[str] = []
    request = _request(out["messages"])  # judged on what is sent: adjacency between visible messages
    for i, m in enumerate(request[:-1]):
        calls = sorted(b["id"] for b in m["content"] if b.get("type") == "tool_use") if isinstance(
            m.get("content"), list) and m.get("role") == "assistant" else []
        if not calls:
            continue
        nxt = request[i + 1]
        blocks: list[Any] = c if nxt.get("role") == "user" and isinstance(c := nxt.get("content"), list) else []
        lead: list[str] = []
        for block in blocks:
            if block.get("type") != "tool_result":
                break
            lead.append(block.get("tool_use_id"))
        if sorted(lead) != calls:
            problems.append(f"messages.{i + 1} starts with results {lead}, calls are {calls} (§3.1)")
    return problems


# -- the hand inputs ---------------------------------------------------------------------------


def _one_big(chars: int = 3000) -> list[Json]:
    return [user("Fix the failing parser test."), assistant([use("t1")]), user([result("t1", prose(chars))])]


def _five_in_one(chars: int) -> list[Json]:
    ids = [f"t{i}" for i in range(1, 6)]
    return [user("Read the five modules."), assistant([use(t) for t in ids]),
            user([result(t, prose(chars)) for t in ids])]


def _floors(messages: list[Json]) -> int:
    """The recount with every textual tool result cut to the floor plus its notice (what degradation can reach)."""
    from tests.quality.zoo._degrade import notice

    cut = codec.copy_json(messages)
    for m in cut:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result" and isinstance(b["content"], str) and len(b["content"]) > 300:
                b["content"] = b["content"][:200] + notice(len(b["content"]) - 200)
    return recount(cut)


def _hand_inputs() -> dict[str, tuple[Json, Callable[[Json, Json, Op], list[str]]]]:
    w: dict[str, tuple[Json, Callable[[Json, Json, Op], list[str]]]] = {}

    # finding 1: zero progress reported as success
    w["bug_entry_total_tokens"] = (over_by(_one_big(), 100), check_progress)
    w["bug_shrunk_counts_skips"] = (over_by(_one_big(250), 3), check_progress)

    # finding 2: success over budget when progress is possible but the budget is not reachable
    five = _five_in_one(3000)
    w["bug_converges_one_cut"] = (budget(five, _floors(five) - 20), check_converges)
    big = _five_in_one(6000)
    w["bug_converges_halfway"] = (budget(big, _floors(big) + 40), check_converges)
    one = _one_big()
    w["bug_partial_on_failure"] = (budget(one, _floors(one) - 20), lambda p, o, op: check_fits(p, o, op))

    # finding 3: the notice not reserved (dense text just above the floor, cheap tails)
    w["bug_notice_room_digits"] = (over_by(_with_result(dense(400)), 1), check_degradation)
    w["bug_notice_eligible_floor"] = (over_by(_with_result(dense(230)), 5), check_degradation)
    cheap_tail = [user("Show the padded report and the log."), assistant([use("t1"), use("t2")]),
                  user([result("t1", prose(210) + " " * 800), result("t2", prose(900))])]
    w["bug_notice_guard_prefix"] = (over_by(cheap_tail, 40), check_degradation)

    # finding 4: degradation of hidden tool results
    condensed = [
        user("Fix the failing parser test.", condenseParent="c1"),
        assistant([use("t0")], condenseParent="c1"),
        user([result("t0", prose(5000))], condenseParent="c1"),
        summary("c1"),
        assistant([use("t1")]),
        user([result("t1", prose(3000))]),
    ]
    w["bug_shrink_cut_mask"] = (over_by(condensed, 100), check_degradation)
    legacy = [
        user("Fix the failing parser test.", condenseParent="c1"),
        assistant([use("t0")], condenseParent="c1"),
        user([result("t0", prose(5000))], condenseParent="c1"),
        summary("c1", role="assistant"),
        user("Please go on."),
        assistant([use("t1")]),
        user([result("t1", prose(3000))]),
    ]
    w["bug_shrink_legacy_summary"] = (over_by(legacy, 100), check_degradation)
    out_of_slice = [
        user("Fix the failing parser test."),
        marker("m0"),
        summary("c1"),
        assistant([use("t0")], truncationParent="m0"),
        user([result("t0", prose(3500))], truncationParent="m0"),
        assistant([use("t1")]),
        user([result("t1", prose(3000))]),
    ]
    w["bug_shrink_parents_in_view"] = (over_by(out_of_slice, 100), check_degradation)

    # finding 5: visibility (a dangling truncationParent, in the cut)
    dangling = [
        user("Fix the failing parser test."),
        assistant([use("t1")], truncationParent="gone"),
        user([result("t1", prose(3000))]),
        assistant("The fixture is stale; regenerating it."),
        user("OK."),
        assistant("Done."),
        user("Now run the suite."),
    ]
    w["bug_cut_dangling_positions"] = (over_by(dangling, 200), check_pairing)

    # finding 6: pairing (results split by an image)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    split = [user("Open the page and run the check."), assistant([use("t1"), use("t2")]),
             user([result("t1", "page.png saved"), image, result("t2", "check passed"),
                   {"type": "text", "text": "Looks right?"}])]
    w["bug_results_keep_images"] = ({"messages": split}, check_results_lead)

    # finding 7: the cut orphans a result
    between = [
        user("Fix the failing parser test."),
        marker("m0"),
        assistant([use("t1", path="fixture.json", content=prose(3000))]),
        user("(an earlier note)", truncationParent="m0"),
        user([result("t1", "ok")]),
        assistant("Written."),
        user("Now run the suite."),
    ]
    w["bug_cut_stored_neighbour"] = (over_by(between, 200), check_pairing)
    alternating = [
        user("Fix the failing parser test."),
        assistant([use("t1")]),
        user([result("t1", prose(3000))]),
        assistant([use("t2")]),
        user([result("t2", prose(3000))]),
        assistant("Done."),
        user("Now run the suite."),
    ]
    w["bug_cut_ends_on_assistant"] = (over_by(alternating, 200), check_pairing)
    return w


def _with_result(text: str) -> list[Json]:
    return [user("Fix the failing parser test."), assistant([use("t1")]), user([result("t1", text)])]


class _ConvergingBase(FieldRecovery):
    recover_success = "converges"


def _run(op: Op, params: Json) -> Json:
    return op(codec.copy_json(params))


def _outcome(params: Json, out: Json) -> str:
    """What the reference did on the hand input: recovered (to N tokens), or its controlled error."""
    if "contextWindow" not in params:
        return "normalized"
    if out.get("error") is not None:
        return "controlled error"
    new = recount(out["messages"], params.get("systemPrompt", ""))
    over = " (over budget: converges)" if new > allowed_of(params) else ""
    return f"recovered {recount(params['messages'], params.get('systemPrompt', ''))} -> {new}{over}"


def main() -> int:
    inputs = _hand_inputs()
    head = ("variant", "clause", "variant on its hand input", "reference", "field base",
            "reference / field base outcome")
    rows = [head]
    failed = 0
    for name, (params, check) in inputs.items():
        module = importlib.import_module(f"tests.quality.zoo.{name}")
        base: Op
        if hasattr(module, "recover"):
            variant, ref_op = module.recover, reference.op_recover
            base = _ConvergingBase() if getattr(variant, "recover_success", "fits") == "converges" else FieldRecovery()
        else:
            variant, ref_op, base = module.normalize, reference.op_normalize, FieldNormalizer()
        got = check(params, _run(variant, params), variant)
        ref_out = _run(ref_op, params)
        ref = check(params, ref_out, ref_op)
        ctl = check(params, _run(base, params), base)
        if not got or ref or ctl:
            failed += 1
        outcomes = f"{_outcome(params, ref_out)} / {_outcome(params, _run(base, params))}"
        rows.append((name, module.CLAUSE, "; ".join(got) or "NOT BROKEN", "; ".join(ref) or "clean",
                     "; ".join(ctl) or "clean", outcomes))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if k == 0:
            print("-|-".join("-" * w for w in widths))
    print(f"\n{len(inputs) - failed}/{len(inputs)} hand inputs: the variant breaks its clause, "
          "the reference and the field base do not")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
