"""Self-check of ``_field.FieldRecovery``: on random histories it breaks none of the hand-input clause checks.

The recovery variants of ``families.py`` differ from ``FieldRecovery`` by one method, so the base must
be correct on its own: for each random history and budget, both policies (``fits``, ``converges``)
pass the clause checks of ``hand_inputs.py`` plus the tagging rules of contract §4.3 and rule 8, and
the ``fits`` base succeeds exactly where the reference does. No Hypothesis, no gate:

    .venv/bin/python -m tests.quality.zoo.field_check [SEED] [CASES]
"""

from __future__ import annotations

import random
import sys
from typing import Any

from ctxmodel import codec
from ctxmodel.targets import reference
from ctxmodel.visibility import visible_mask
from tests.quality.zoo._field import FieldRecovery
from tests.quality.zoo.hand_inputs import (
    _ConvergingBase,
    assistant,
    budget,
    check_degradation,
    check_fits,
    check_pairing,
    check_progress,
    dense,
    marker,
    prose,
    recount,
    result,
    summary,
    use,
    user,
)

Json = dict[str, Any]


def history(r: random.Random) -> list[Json]:
    """Exchanges with 1-3 calls (prose, dense or cheap-tailed results, string or list content), plain
    turns, extra user notes, and now and then a summary, a marker or a dangling truncationParent."""
    msgs = [user("Task: " + prose(r.randint(5, 80)))]
    n = 0
    for _ in range(r.randint(1, 7)):
        if r.random() < 0.7:
            ids = [f"t{n + i}" for i in range(r.randint(1, 3))]
            n += len(ids)
            msgs.append(assistant([use(t) for t in ids]))
            res: list[Json] = []
            for t in ids:
                k = r.random()
                if k < 0.6:
                    text = prose(r.randint(0, 4000))
                elif k < 0.8:
                    text = dense(r.randint(150, 600))
                else:
                    text = prose(r.randint(100, 300)) + " " * r.randint(0, 900)
                res.append(result(t, text) if r.random() < 0.8 else result(t, [{"type": "text", "text": text}]))
            if r.random() < 0.2:
                res.append({"type": "text", "text": "env"})
            msgs.append(user(res))
        else:
            msgs.append(assistant(prose(r.randint(1, 300))))
            msgs.append(user(prose(r.randint(1, 300))))
        if r.random() < 0.15:
            msgs.append(user("extra note"))
    if r.random() < 0.3:
        k = r.randint(1, len(msgs) - 1)
        for i in range(k):
            msgs[i] = dict(msgs[i], condenseParent="c1")
        msgs.insert(k, summary("c1"))
    if r.random() < 0.3:
        i = r.randint(1, len(msgs) - 1)
        msgs[i] = dict(msgs[i], truncationParent=r.choice(["m0", "gone"]))
        if r.random() < 0.7:
            msgs.insert(r.randint(1, len(msgs)), marker("m0"))
    return msgs


def tagging(params: Json, out: Json) -> list[str]:
    """§4 rule 3 (only visible messages tagged, never the first or last visible nor an old marker) and rule 8."""
    if out.get("error") is not None:
        return [] if out["messages"] == params["messages"] else ["a controlled error changed the messages (§4.8)"]
    before, after = params["messages"], out["messages"]
    old = {m.get("truncationId") for m in before if m.get("isTruncationMarker")}
    rest = [m for m in after if not (m.get("isTruncationMarker") and m.get("truncationId") not in old)]
    if len(rest) != len(before):
        return ["messages deleted (§4.3)"]
    mask = visible_mask(codec.load(before))
    vis = [i for i, shown in enumerate(mask) if shown]
    problems: list[str] = []
    for i, (a, b) in enumerate(zip(before, rest, strict=True)):
        if b.get("truncationParent") == a.get("truncationParent"):
            continue
        if not mask[i] or i in (vis[0], vis[-1]) or a.get("isTruncationMarker"):
            problems.append(f"message {i} tagged against §4.3")
    return problems


def main(argv: list[str]) -> int:
    seed = int(argv[0]) if argv else 0
    cases = int(argv[1]) if len(argv) > 1 else 150
    r = random.Random(seed)
    bad = disagree = 0
    for case in range(cases):
        msgs = history(r)
        params = budget(msgs, max(1, int(recount(msgs) * r.uniform(0.05, 1.1))))
        for op, policy in ((FieldRecovery(), "fits"), (_ConvergingBase(), "converges")):
            out = op(codec.copy_json(params))
            problems = (check_progress(params, out, op) + check_fits(params, out, op, policy)
                        + check_degradation(params, out, op) + check_pairing(params, out, op) + tagging(params, out))
            if problems:
                bad += 1
                print(f"case {case} ({policy}): {'; '.join(problems[:3])}")
        ref = reference.op_recover(codec.copy_json(params))
        mine = FieldRecovery()(codec.copy_json(params))
        disagree += (ref["error"] is None) != (mine["error"] is None)
    print(f"{cases} histories (seed {seed}): {bad} broken results, "
          f"{disagree} success/error disagreements with the reference")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
