"""Properties of ``effective`` (contract §2).

Required of every target: the reference's visibility, except that a target may also drop
``tool_result`` blocks whose ``tool_use`` is not in the effective history (cloning the message) and
must then remove a message this empties — the orphan filter Roo-Code applies after a condense.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check, declare_op
from ctxmodel.properties.json_reading import btype, canon, content_blocks, messages_of, short
from ctxmodel.properties.yardsticks import visible_mask

Msg = dict[str, Any]


def _histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """Two in three: histories holding chosen cells of ``ctxmodel.partition``'s effective partition
    (each parent tag by what it names and where it stands, drawn cell first); one in three:
    the slice-era two-summary shape."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import effective_histories, histories
    from ctxmodel.strategies.cells import novel

    cells = effective_histories()
    return st.builds(lambda messages: {"messages": messages},
                     st.one_of(cells, cells, novel(histories()).map(_two_summaries)))


def _two_summaries(history: list[Msg]) -> list[Msg]:
    """Two summaries that tag nothing, the slice-era shape (domain §2.1 Branch A step 1: everything
    before the *last* summary is dropped whatever its tags), so a target that starts at the first
    summary shows what lies between them; no draw of its own, so the other choices keep their odds."""
    out = [dict(m) for m in history]
    for n, at in enumerate((len(out), max(1, len(out) // 2))):
        out.insert(at, {"role": "user", "content": [{"type": "text", "text": f"Summary {n + 1}"}],
                        "isSummary": True, "condenseId": f"cond-slice-{n + 1}"})
    return out


def _filterable(message: Msg, visible_ids: set[str]) -> list[int]:
    """Indices of the blocks the §2 allowance lets a target drop from this message."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return [
        i for i, b in enumerate(content) if btype(b) == "tool_result" and b.get("tool_use_id") not in visible_ids
    ]


def _is_filtered(original: Msg, got: Msg, droppable: list[int]) -> bool:
    """``got`` is ``original`` with some droppable results removed (and nothing else changed)."""
    if not droppable or not isinstance(got.get("content"), list):
        return False
    if {k: v for k, v in got.items() if k != "content"} != {k: v for k, v in original.items() if k != "content"}:
        return False
    content = original["content"]
    have = got["content"]
    p = 0
    for i, block in enumerate(content):
        if p < len(have) and canon(have[p]) == canon(block):
            p += 1
        elif i not in droppable:
            return False
    return p == len(have) and len(have) > 0


def _match(
    expected: Sequence[Msg], got: Sequence[Msg], visible_ids: set[str] | None
) -> tuple[int, int] | None:
    """None when ``got`` is ``expected`` up to the allowance (``visible_ids`` None: no allowance);
    else the first ``(expected index, got index)`` where they part."""
    exp_keys = [canon(m) for m in expected]
    got_keys = [canon(m) for m in got]
    drops = [_filterable(m, visible_ids) if visible_ids is not None else [] for m in expected]

    @cache
    def fits(i: int, k: int) -> bool:
        if i == len(expected):
            return k == len(got)
        if k < len(got) and exp_keys[i] == got_keys[k] and fits(i + 1, k + 1):
            return True
        if drops[i]:
            if k < len(got) and _is_filtered(expected[i], got[k], drops[i]) and fits(i + 1, k + 1):
                return True
            if len(drops[i]) == len(content_blocks(expected[i])) and fits(i + 1, k):
                return True
        return False

    if fits(0, 0):
        return None
    # Where they part: the longest common run from the start, for the message.
    i = k = 0
    while i < len(expected) and k < len(got) and exp_keys[i] == got_keys[k]:
        i += 1
        k += 1
    return i, k


def _contract_effective(history: list[Msg]) -> tuple[list[Msg], list[int]]:
    kept = [i for i, keep in enumerate(visible_mask(history)) if keep]
    return [history[i] for i in kept], kept


def _effective_histories(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """What every op's properties draw for effective (purity): histories holding chosen cells of the
    effective partition."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import effective_histories

    return st.builds(lambda messages: {"messages": messages}, effective_histories())


#: The broken targets of the ops but recover and normalize (``tests/targets/broken_ops.py``).
_P = "python:tests.targets.broken_ops"

declare_op("effective", params=_effective_histories, purity_witnesses=(
    Witness(f"{_P}:RemembersToolUses", "answers-differently"),
    Witness(f"{_P}:MutatesInput", "mutates-input"),
))




@check(
    "effective.visibility",
    op="effective",
    clause="contract §2",
    summary="The effective history shows exactly the messages the visibility predicate shows (after the last summary; "
    "hidden by an existing summary or marker), allowing only the orphan-result filter.",
    witnesses=(Witness(f"{_P}:DanglingParentsHide", "visible-missing"),),
)
def visibility(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history: list[Msg] = ex.params["messages"]
    got = messages_of(ex.result, "effective")
    expected, kept = _contract_effective(history)
    visible_ids = {
        str(b.get("id")) for m in expected if m.get("role") == "assistant"
        for b in content_blocks(m) if btype(b) == "tool_use"
    }
    parted = _match(expected, got, visible_ids)
    if parted is None:
        return
    i, k = parted
    rule = "the last summary and what follows it, less messages whose condenseParent/truncationParent names an " \
        "existing summary/marker; only orphan results may also be dropped (§2)"
    if i < len(expected):
        src = kept[i]
        shown = f"its messages.{k} is {short(got[k], 100)} instead" if k < len(got) else "it ends before it"
        yield Finding.fail(
            f"input messages.{src} is visible but missing from the target's effective history: {shown}",
            rule,
            code="visible-missing",
        )
    else:
        yield Finding.fail(
            f"messages.{k} of the effective history ({short(got[k], 100)}) should be hidden or is not in the input",
            rule,
            code="hidden-shown",
        )


@check(
    "effective.subsequence",
    op="effective",
    clause="contract §2",
    summary="The effective history is an order-preserving subsequence of the input that edits no content (a message "
    "may only lose tool results, under the orphan filter).",
    witnesses=(Witness(f"{_P}:CleansInEffective", ""),),
)
def subsequence(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    history: list[Msg] = ex.params["messages"]
    got = messages_of(ex.result, "effective")
    keys = [canon(m) for m in history]
    i = 0
    for k, message in enumerate(got):
        key = canon(message)
        while i < len(history):
            drop = _filterable(history[i], set())  # any result: which ones is effective.visibility's to judge
            if keys[i] == key or _is_filtered(history[i], message, drop):
                break
            i += 1
        if i == len(history):
            yield Finding.fail(
                f"messages.{k} of the effective history is not an input message in order (content or metadata "
                f"edited, or moved): {short(message, 120)}",
                "an order-preserving subsequence of the input that edits no content (§2)",
            )
            return
        i += 1
