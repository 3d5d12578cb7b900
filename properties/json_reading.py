"""Pairing and content analysis on JSON histories, shared by the property suites.

The checks judge exactly what a target sent back, so they read JSON (lists of message dicts), never
our model or our own ``normalize``: a check that repaired the output before judging it would hide the
very bugs it exists to find (contract §4.4). Everything here is a pure function of its arguments.

What the checks may assume about a target is only the *required* layer of the contract and the
target's declared policies. Where the contract leaves a choice open (which duplicate is kept,
whether an emptied message is removed or kept holding synthetic results, string content versus one
text block), the helpers accept every allowed choice.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from ctxmodel import codec
from ctxmodel.contract_data import (
    CONVERSION_PREFIX,
    DUPLICATE_RESULT,
    MISSING_RESULT,
    UNEXPECTED_RESULT,
    distinct_tool_use_ids,
)
from ctxmodel.errors import HistoryError
from ctxmodel.json_types import JsonBlock as Block
from ctxmodel.json_types import JsonMessage as Msg

__all__ = [
    "CONVERSION_PREFIX",
    "Malformed",
    "NormalizePlan",
    "Orphan",
    "content_blocks",
    "is_conversion",
    "leading_results",
    "messages_of",
    "pairing_violations",
    "plan_normalize",
    "result_payload",
    "result_texts",
    "synthetic_marked",
    "use_ids",
]


class Malformed(Exception):
    """A target reply that is not of the shape contract §7 gives its op; reported as a failure."""


def messages_of(result: Mapping[str, Any] | None, op: str) -> list[Msg]:
    """The ``messages`` of a reply, refused with one line naming the place when not a history."""
    if not isinstance(result, Mapping):
        raise Malformed(f"{op} returned {type(result).__name__}, not a JSON object")
    value = result.get("messages")
    if not isinstance(value, list):
        raise Malformed(f'{op} returned no "messages" array (got {type(value).__name__})')
    try:
        codec.load(value, copy=False)
    except HistoryError as exc:
        raise Malformed(f"{op} returned an invalid history: {exc}") from None
    return value


def content_blocks(msg: Mapping[str, Any]) -> list[Block]:
    """The content as blocks: a non-empty string reads as one text block, ``""`` as none (domain D7)."""
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def is_empty(msg: Mapping[str, Any]) -> bool:
    content = msg.get("content")
    return content == "" or content == []


def btype(block: Any) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    return kind if isinstance(kind, str) else None


#: The distinct ``tool_use`` ids of an assistant message, in order (empty for a user message).
use_ids = distinct_tool_use_ids


def leading_results(msg: Mapping[str, Any]) -> list[Block]:
    """The maximal leading run of ``tool_result`` blocks: what the API pairs (contract §3.1)."""
    out: list[Block] = []
    for block in content_blocks(msg):
        if btype(block) != "tool_result":
            break
        out.append(block)
    return out


def _payload_content(block: Mapping[str, Any]) -> Any:
    content = block.get("content")
    if content is None or content == "" or content == []:
        return ""  # absent, empty string and empty list say the same thing to the API
    return content


def result_payload(block: Mapping[str, Any]) -> str:
    """What must survive normalization unchanged: content and ``is_error`` (contract §3.2)."""
    return json.dumps([_payload_content(block), block.get("is_error") is True], sort_keys=True, ensure_ascii=False)


def result_texts(block: Mapping[str, Any]) -> list[str]:
    """The texts a result carries: its string content, or the text of each text item."""
    content = block.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [i["text"] for i in content if btype(i) == "text" and isinstance(i.get("text"), str)]
    return []


def synthetic_marked(block: Mapping[str, Any]) -> bool:
    """Non-empty and marked by ``is_error: true`` and/or text containing "interrupt" (contract §3.3)."""
    text = "\n".join(result_texts(block))
    if not text.strip():
        return False
    return block.get("is_error") is True or "interrupt" in text.lower()


def is_conversion(block: Any) -> bool:
    return btype(block) == "text" and isinstance(block.get("text"), str) and block["text"].startswith(CONVERSION_PREFIX)


def conversion_holds(text_block: Mapping[str, Any], result: Mapping[str, Any]) -> bool:
    """A ``Tool result:`` text holds a result when each of its texts appears verbatim (contract §3.4)."""
    text = text_block.get("text", "")
    return isinstance(text, str) and all(t in text for t in result_texts(result))


#: Integers up to this magnitude are exact doubles; beyond it a number is rounded as a double is.
_EXACT_INT = 2**53


def _number(value: int | float) -> int | float:
    """A JSON number as the IEEE double a JavaScript agent (and the API) reads it (contract §1):
    ``0.0``, ``-0.0`` and ``0``, ``1e2`` and ``100`` are one value, written the one way."""
    if isinstance(value, int):
        if -_EXACT_INT <= value <= _EXACT_INT:
            return value
        try:
            value = float(value)
        except OverflowError:  # JSON.parse reads 1e400 as Infinity
            return math.inf if value > 0 else -math.inf
    if value.is_integer() and -_EXACT_INT <= value <= _EXACT_INT:
        return int(value)
    return value


def _by_value(value: Any) -> Any:
    """``value`` with every number replaced by :func:`_number` (bools stay bools)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict:
        return {k: _by_value(v) for k, v in value.items()}
    if kind is list:
        return [_by_value(v) for v in value]
    if kind is int:
        return value if -_EXACT_INT <= value <= _EXACT_INT else _number(value)
    if kind is float:
        return _number(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _by_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_by_value(v) for v in value]
    if isinstance(value, int | float):
        return _number(value)
    return value


def canon(value: Any) -> str:
    """A key for content equality (contract §1): JSON equality, objects by key, numbers by value as
    IEEE doubles, ``true`` never equal to ``1``. A target that reads with ``JSON.parse`` and writes
    with ``JSON.stringify`` (``{"x": 0.0}`` back as ``{"x": 0}``) edits nothing."""
    return json.dumps(_by_value(value), sort_keys=True, ensure_ascii=False)


def short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------------------------
# Pairing violations as the API sees them (contract §4.4: §3 rules 1 and 4, by rule and tool id)


def pairing_violations(messages: Sequence[Mapping[str, Any]]) -> Counter[tuple[str, str]]:
    """Violations of §3 rule 1 (no result leading the next message, or more than one) and rule 4
    (a result whose id is not a ``tool_use`` of the message before), keyed by rule and id so a
    recovery that moves messages around is compared by what the API would reject, not by position.
    A last assistant message's calls are pending, not missing."""
    out: Counter[tuple[str, str]] = Counter()
    for k, msg in enumerate(messages):
        role = msg.get("role")
        if role == "assistant" and k + 1 < len(messages):
            ids = use_ids(msg)
            nxt = messages[k + 1]
            lead = Counter(b.get("tool_use_id") for b in leading_results(nxt)) if nxt.get("role") == "user" else {}
            for tool_id in ids:
                seen = lead.get(tool_id, 0)
                if seen == 0:
                    out[(MISSING_RESULT, tool_id)] += 1
                elif seen > 1:
                    out[(DUPLICATE_RESULT, tool_id)] += seen - 1
        if role == "user":
            prev = messages[k - 1] if k > 0 else None
            allowed = set(use_ids(prev)) if prev is not None else set()
            for block in content_blocks(msg):
                if btype(block) == "tool_result" and block.get("tool_use_id") not in allowed:
                    out[(UNEXPECTED_RESULT, str(block.get("tool_use_id")))] += 1
    return out


# --------------------------------------------------------------------------------------------
# What contract §3 requires of normalize(H), computed from H alone


@attrs.frozen
class Orphan:
    """An orphan result of the input (contract §3.4) and where it stood among the other blocks."""

    source: int
    block: int
    id: str
    result: Block
    #: How many kept (non-result) blocks precede it in its message: where a ``to_text`` text goes.
    before: int
    #: Valid against the message rule 5 brought before it (see ``NormalizePlan.loose``).
    optional: bool = False


@attrs.frozen
class NormalizePlan:
    """The input after rule 5 (``H'``, by input index), and what rules 1-4 and 6 then require."""

    #: ``(input index, message after rule 5)``; messages rule 5 emptied are gone.
    messages: list[tuple[int, Msg]]
    #: Valid results by id: ``(input message, block, result)`` (rule 2).
    valid: dict[str, list[tuple[int, int, Block]]]
    #: Results valid only against the neighbour rule 5's removals brought next to them: the contract
    #: judges validity "in the input", an implementation may judge it after rule 5; either is taken.
    loose: dict[str, list[tuple[int, int, Block]]]
    orphans: list[Orphan]
    #: Results removed with a later duplicate ``tool_use`` (rule 5).
    removed_results: list[Block]
    #: Ids whose later duplicate ``tool_use`` blocks are removed, with their first block.
    duplicated: dict[str, Block]
    #: Ids that also occur where rule 8 lets defects pass (``tool_use`` in a user message,
    #: ``tool_result`` in an assistant message): the checks ignore them rather than guess.
    ambiguous: frozenset[str]
    #: The last message's ``tool_use`` ids when ``H'`` ends with one (the trailing policy's case).
    trailing: tuple[str, ...]
    #: Blocks rule 6 keeps, by input index (user: non-result blocks; assistant: all but removed uses).
    mandatory: dict[int, list[Block]]
    #: The index in ``messages`` of each input index.
    position: dict[int, int]
    #: Input index of the message holding each surviving ``tool_use`` id.
    use_source: dict[str, int]

    def payloads(self, tool_id: str, loose: bool = True) -> set[str]:
        entries = self.valid.get(tool_id, []) + (self.loose.get(tool_id, []) if loose else [])
        return {result_payload(block) for _, _, block in entries}

    def all_results(self) -> Iterator[Block]:
        for table in (self.valid, self.loose):
            for entries in table.values():
                for _, _, block in entries:
                    yield block
        for orphan in self.orphans:
            yield orphan.result
        yield from self.removed_results


def ambiguous_ids(messages: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    out: set[str] = set()
    for msg in messages:
        for block in content_blocks(msg):
            kind = btype(block)
            if msg.get("role") == "user" and kind == "tool_use":
                out.add(str(block.get("id")))
            elif msg.get("role") == "assistant" and kind == "tool_result":
                out.add(str(block.get("tool_use_id")))
    return frozenset(out)


def block_id(block: Mapping[str, Any]) -> str | None:
    kind = btype(block)
    if kind == "tool_use":
        value = block.get("id")
    elif kind == "tool_result":
        value = block.get("tool_use_id")
    else:
        return None
    return str(value)


def mandatory_blocks(msg: Mapping[str, Any], ambiguous: frozenset[str]) -> list[Block]:
    """The blocks of a message rule 6 keeps in order: a user message's non-result blocks, an
    assistant message's blocks (results there are rule-8 defects that pass through)."""
    out: list[Block] = []
    for block in content_blocks(msg):
        if block_id(block) in ambiguous:
            continue
        if msg.get("role") == "user" and btype(block) == "tool_result":
            continue
        out.append(block)
    return out


def plan_normalize(history: Sequence[Mapping[str, Any]]) -> NormalizePlan:
    ambiguous = ambiguous_ids(history)
    seen: set[str] = set()
    duplicated: dict[str, Block] = {}
    first_block: dict[str, Block] = {}
    stage: list[tuple[int, Msg]] = []
    removed_results: list[Block] = []
    later_removed: set[str] = set()
    # Rule 5 first: a later tool_use of a used id goes, with its results when in a later message.
    for index, msg in enumerate(history):
        content = msg.get("content")
        drop_ids, later_removed = later_removed, set()
        if msg.get("role") == "assistant" and isinstance(content, list):
            here: set[str] = set()
            kept: list[Any] = []
            for block in content:
                tool_id = block_id(block) if btype(block) == "tool_use" else None
                if tool_id is not None and tool_id not in ambiguous:
                    if tool_id in seen:
                        duplicated.setdefault(tool_id, first_block[tool_id])
                        if tool_id not in here:
                            later_removed.add(tool_id)
                        continue
                    seen.add(tool_id)
                    here.add(tool_id)
                    first_block[tool_id] = block
                kept.append(block)
            new = dict(msg, content=kept)
        elif msg.get("role") == "user" and isinstance(content, list) and drop_ids:
            kept = []
            for block in content:
                if btype(block) == "tool_result" and block_id(block) in drop_ids:
                    removed_results.append(block)
                    continue
                kept.append(block)
            new = dict(msg, content=kept)
        else:
            new = dict(msg)
        if is_empty(new) and not is_empty(msg):
            continue
        stage.append((index, new))

    valid: dict[str, list[tuple[int, int, Block]]] = {}
    loose: dict[str, list[tuple[int, int, Block]]] = {}
    orphans: list[Orphan] = []
    mandatory: dict[int, list[Block]] = {}
    position: dict[int, int] = {}
    use_source: dict[str, int] = {}
    for pos, (index, msg) in enumerate(stage):
        position[index] = pos
        mandatory[index] = mandatory_blocks(msg, ambiguous)
        for tool_id in use_ids(msg):
            if tool_id not in ambiguous:
                use_source.setdefault(tool_id, index)
        if msg.get("role") != "user":
            continue
        near = stage[pos - 1] if pos > 0 else None
        # Valid "in the input": against the input message immediately before, when it survived.
        prev_ids = set(use_ids(near[1])) if near is not None and near[0] == index - 1 else set()
        near_ids = set(use_ids(near[1])) if near is not None else set()
        kept_before = 0
        original = msg.get("content")
        for b_index, block in enumerate(original if isinstance(original, list) else []):
            tool_id = block_id(block) if btype(block) == "tool_result" else None
            if tool_id is None:
                if block_id(block) not in ambiguous:
                    kept_before += 1
                continue
            if tool_id in ambiguous:
                continue
            if tool_id in prev_ids:
                valid.setdefault(tool_id, []).append((index, b_index, block))
            elif tool_id in near_ids:
                loose.setdefault(tool_id, []).append((index, b_index, block))
                orphans.append(Orphan(index, b_index, tool_id, block, kept_before, optional=True))
            else:
                orphans.append(Orphan(index, b_index, tool_id, block, kept_before))
    trailing: tuple[str, ...] = ()
    if stage and stage[-1][1].get("role") == "assistant":
        trailing = tuple(i for i in use_ids(stage[-1][1]) if i not in ambiguous)
    return NormalizePlan(
        messages=stage,
        valid=valid,
        loose=loose,
        orphans=orphans,
        removed_results=removed_results,
        duplicated=duplicated,
        ambiguous=ambiguous,
        trailing=trailing,
        mandatory=mandatory,
        position=position,
        use_source=use_source,
    )


# --------------------------------------------------------------------------------------------
# Aligning normalize's output with its input


@attrs.frozen
class Extra:
    """A ``Tool result:`` text in the output that is not one of the input's own blocks."""

    message: int
    block: int
    value: Block
    #: Kept blocks before it in its message, when the message is aligned with an input message.
    before: int | None


@attrs.frozen
class Alignment:
    #: input index -> output index, for input messages with blocks rule 6 keeps.
    mapping: dict[int, int]
    #: First problem met, as ``(output index or None, input index or None, text)``.
    problems: list[str]
    extras: list[Extra]


def out_blocks(msg: Mapping[str, Any], ambiguous: frozenset[str]) -> list[tuple[int, Block]]:
    """Output blocks to compare with the input's kept blocks: results in a user message are judged
    by the pairing properties, not here."""
    out: list[tuple[int, Block]] = []
    content = msg.get("content")
    if isinstance(content, str):
        return [(0, {"type": "text", "text": content})] if content else []
    for index, block in enumerate(content if isinstance(content, list) else []):
        if block_id(block) in ambiguous:
            continue
        if msg.get("role") == "user" and btype(block) == "tool_result":
            continue
        out.append((index, block))
    return out


def _covers(have: list[tuple[int, Block]], need: list[Block]) -> list[tuple[int, Block, int]] | None:
    """``need`` in order within ``have``, where only ``Tool result:`` texts may be extra. Returns
    the extras as ``(block index, block, kept blocks before it)``, or None when it does not fit."""
    extras: list[tuple[int, Block, int]] = []
    p = 0
    for index, block in have:
        if p < len(need) and canon(block) == canon(need[p]):
            p += 1
        elif is_conversion(block):
            extras.append((index, block, p))
        else:
            return None
    return extras if p == len(need) else None


def _skippable(msg: Mapping[str, Any], ambiguous: frozenset[str]) -> bool:
    return all(is_conversion(b) for _, b in out_blocks(msg, ambiguous))


def align(plan: NormalizePlan, out: Sequence[Mapping[str, Any]]) -> Alignment:
    """Match each input message that has blocks to keep with the output message that keeps them,
    in order. Output messages in between may hold only results and ``Tool result:`` texts (inserted
    messages, messages that held only results)."""
    mapping: dict[int, int] = {}
    problems: list[str] = []
    extras: list[Extra] = []
    k = 0
    for index, msg in plan.messages:
        need = plan.mandatory[index]
        if not need:
            continue
        found = None
        for kk in range(k, len(out)):
            cand = out[kk]
            if cand.get("role") == msg.get("role"):
                got = _covers(out_blocks(cand, plan.ambiguous), need)
                if got is not None:
                    found = kk
                    extras.extend(Extra(kk, b, v, before) for b, v, before in got)
                    break
            if not _skippable(cand, plan.ambiguous) and not problems:
                kept = [b for _, b in out_blocks(cand, plan.ambiguous)]
                problems.append(
                    f"messages.{kk} ({cand.get('role')}) is not input messages.{index} ({msg.get('role')}) "
                    f"with its content kept: {difference(need, kept, 'content')}"
                )
        if found is None:
            if not problems:
                problems.append(f"the content of input messages.{index} is missing from the output: {short(need)}")
            continue
        for kk in range(k, found):
            extras.extend(Extra(kk, b, v, None) for b, v in out_blocks(out[kk], plan.ambiguous) if is_conversion(v))
        mapping[index] = found
        k = found + 1
    for kk in range(k, len(out)):
        if not _skippable(out[kk], plan.ambiguous):
            if not problems:
                content = short(out[kk].get("content"))
                problems.append(f"messages.{kk} holds content that is not in the input: {content}")
        else:
            extras.extend(Extra(kk, b, v, None) for b, v in out_blocks(out[kk], plan.ambiguous) if is_conversion(v))
    return Alignment(mapping, problems, extras)


def assistant_index(out: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Output index of the first assistant message holding each ``tool_use`` id."""
    where: dict[str, int] = {}
    for k, msg in enumerate(out):
        for tool_id in use_ids(msg):
            where.setdefault(tool_id, k)
    return where


def results_after(out: Sequence[Mapping[str, Any]], k: int, tool_id: str) -> list[tuple[int, Block]]:
    """The results for ``tool_id`` in the message after output message ``k`` (anywhere in it)."""
    if k + 1 >= len(out) or out[k + 1].get("role") != "user":
        return []
    content = out[k + 1].get("content")
    return [
        (m, b)
        for m, b in enumerate(content if isinstance(content, list) else [])
        if btype(b) == "tool_result" and b.get("tool_use_id") == tool_id
    ]


def _at(value: Any, path: str, root: str) -> Any:
    for part in path.removeprefix(root).strip(".").split("."):
        if not part:
            continue
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return "nothing"
    return value


def difference(expected: Any, got: Any, root: str) -> str:
    """Where two values first differ, and both values there: a diagnosis that points at the place
    rather than two long dumps cut at the same prefix."""
    path = first_difference(expected, got, root)
    if path is None:
        return f"{root} is as expected"
    return f"first difference at {path}: expected {short(_at(expected, path, root))}, got {short(_at(got, path, root))}"


def first_difference(before: Any, after: Any, path: str) -> str | None:
    """The JSON path of the first place two values differ (for "mutated its input" messages)."""
    if type(before) is not type(after):
        return path
    if isinstance(before, dict):
        for key in list(before) + [k for k in after if k not in before]:
            if key not in before or key not in after:
                return f"{path}.{key}"
            found = first_difference(before[key], after[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(before, list):
        for i, (x, y) in enumerate(zip(before, after, strict=False)):
            found = first_difference(x, y, f"{path}.{i}")
            if found:
                return found
        return None if len(before) == len(after) else f"{path}.{min(len(before), len(after))}"
    return None if before == after else path


