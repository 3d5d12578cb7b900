"""OpenAI Responses ``input`` items as a dialect: codec, acceptance oracle, repair, view and count.

The history is kept as the JSON it was read from, a tuple of :class:`Item` views over the objects (as
the Chat dialect keeps its messages): Responses items carry ids, statuses, provider extras and item
types this module never reads (``item_reference``, the built-in tools' calls, ``compaction``), and a
view keeps every key, its order and its value by construction, so ``dump(load(x)) == x`` holds for
any array of objects. Malformed items are loaded and reported by the oracle with their path.

The rules (domain §5.7, contract §6): every ``function_call`` is answered by a later
``function_call_output`` with its ``call_id``, and every output names an earlier call; a ``reasoning``
item is followed by the item the model produced with it, and carries its ``summary`` list. The texts
the API is known to return are quoted verbatim; the rules marked *inferred* or *shape* in
:data:`RULES` have no quoted text, and their messages are ours. Whether an item the server stored with
its reasoning is sent without it cannot be read from one request (it depends on what was stored): the
trim properties judge it by comparing an answer with its input (contract §10.1, §10.8).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from ctxmodel.codec import copy_json
from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import Counted, json_objects
from ctxmodel.json_types import JsonMessage, JsonMessageView
from ctxmodel.oracle import Rule, Violation

if TYPE_CHECKING:
    from ctxmodel.repair import Change, RepairReport
    from ctxmodel.tokens import Counter

__all__ = [
    "DIALECT",
    "RULES",
    "Item",
    "OpenAIResponses",
    "ResponsesHistory",
    "count",
    "detect",
    "dump",
    "follows_reasoning",
    "load",
    "render",
    "repair",
    "validate",
]

#: The roles a ``message`` item takes.
ROLES = frozenset({"user", "assistant", "system", "developer"})
#: Content part types per role (the SDK's input item param types, domain §5.7).
_PART_TYPES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "user": frozenset({"input_text", "input_image", "input_file", "input_audio"}),
        "system": frozenset({"input_text"}),
        "developer": frozenset({"input_text"}),
        "assistant": frozenset({"output_text", "refusal", "input_text"}),
    }
)
#: Item types only a client writes: none of them is what a reasoning item produced (domain §5.7).
_NOT_PRODUCED = frozenset({"function_call_output", "reasoning"})
#: Marks only this dialect has, for detection.
_ITEM_TYPES = frozenset({"function_call", "function_call_output", "reasoning", "item_reference"})
_PART_MARKS = frozenset({"input_text", "output_text", "input_image", "input_file"})

RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "unanswered-function-call": Rule(
            "every function_call is answered by a later function_call_output with its call_id",
            "domain §5.7 (provider text)",
        ),
        "orphan-function-call-output": Rule(
            "a function_call_output's call_id is the call_id of an earlier function_call",
            "domain §5.7 (provider text)",
        ),
        "reasoning-without-following-item": Rule(
            "a reasoning item is followed by the item the model produced with it (a call or an assistant message)",
            "domain §5.7 (provider text; what counts as following: inferred)",
        ),
        "missing-summary": Rule("a reasoning item has a summary list, empty or not", "domain §5.7 (provider text)"),
        "duplicate-function-call-output": Rule(
            "one function_call_output per call_id", "domain §5.7 (inferred)"
        ),
        "duplicate-call-id": Rule("function_calls have distinct call_ids", "domain §5.7 (inferred)"),
        "item-shape": Rule(
            "an item has the fields of its type: a message a role and content of the parts its role takes, a call "
            "string call_id, name and arguments, an output a string call_id and an output",
            "domain §5.7 (shape, from the SDK's types)",
        ),
        "empty-input": Rule("a request has at least one input item", "domain §5.7 (inferred)"),
    }
)


# ----------------------------------------------------------------------------------------------
# The model: a typed view over each item object


@attrs.frozen
class Item:
    """One ``input`` item: the object as read (never mutated), and the fields the rules read."""

    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        """The item's type; an item without one is a ``message`` (the easy input message)."""
        kind = self.raw.get("type", "message")
        return kind if isinstance(kind, str) else "?"

    @property
    def role(self) -> str | None:
        role = self.raw.get("role")
        return role if isinstance(role, str) else None

    @property
    def call_id(self) -> str | None:
        call_id = self.raw.get("call_id")
        return call_id if isinstance(call_id, str) else None

    @property
    def id(self) -> str | None:
        item_id = self.raw.get("id")
        return item_id if isinstance(item_id, str) else None

    def is_call(self) -> bool:
        return self.type == "function_call"

    def is_output(self) -> bool:
        return self.type == "function_call_output"

    def is_reasoning(self) -> bool:
        return self.type == "reasoning"


ResponsesHistory = tuple[Item, ...]


def follows_reasoning(item: Item | None) -> bool:
    """Whether ``item`` can be what a reasoning item right before it produced (domain §5.7): a call, an
    assistant message or another item the model writes; not the end, a user, system or developer
    message, an output or another reasoning item."""
    if item is None or item.type in _NOT_PRODUCED:
        return False
    return not (item.type == "message" and item.role != "assistant")


def load(value: Any) -> ResponsesHistory:
    """The items of a JSON array, copied. Refuses only what is not a list of objects."""
    return tuple(Item(i) for i in json_objects(value, "input", "input items", "an item object"))


def dump(history: Iterable[Item]) -> list[JsonMessage]:
    """The JSON array again: every key, its order and its value as loaded (copies)."""
    return [copy_json(dict(i.raw)) for i in history]


def detect(value: Any) -> int:
    """How strongly an array reads as Responses items: item types and part types only it has."""
    if not isinstance(value, list):
        return 0
    score = 0
    for item in value:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in _ITEM_TYPES or (kind == "message" and "role" in item):
            score += 4
        content = item.get("content")
        if isinstance(content, list):
            score += sum(3 for p in content if isinstance(p, dict) and p.get("type") in _PART_MARKS)
    return score


# ----------------------------------------------------------------------------------------------
# The oracle


def _message_rules(n: int, item: Item, out: list[Violation]) -> None:
    path = f"input.{n}"
    role = item.role
    if role not in ROLES:
        shown = f"'{role}'" if role is not None else "missing"
        out.append(Violation("item-shape", f"{path}.role",
                             f"{path}.role: {shown}: a message item's role is user, assistant, system or developer"))
        return
    content = item.raw.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        out.append(Violation("item-shape", f"{path}.content",
                             f"{path}.content: expected a string or an array of content parts"))
        return
    allowed = _PART_TYPES[role]
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str) or kind not in allowed:
            shown = f"'{kind}'" if isinstance(kind, str) else "no type"
            out.append(Violation("item-shape", f"{path}.content.{k}",
                                 f"{path}.content.{k}: a {role} message takes {' or '.join(sorted(allowed))} parts, "
                                 f"not {shown}"))


def _call_rules(n: int, item: Item, out: list[Violation]) -> None:
    path = f"input.{n}"
    ids = (item.call_id,) if item.call_id is not None else ()
    for key, why in (("call_id", "the id its output answers"), ("name", "the function's name"),
                     ("arguments", "the arguments as JSON text")):
        if not isinstance(item.raw.get(key), str):
            out.append(Violation("item-shape", f"{path}.{key}", f"{path}.{key}: expected a string ({why})", ids=ids))


def _reasoning_text(item: Item) -> str:
    shown = item.id if item.id is not None else ""
    return f"Item '{shown}' of type 'reasoning' was provided without its required following item."


def validate(history: Sequence[Item]) -> list[Violation]:
    """Every violation of the request ``history`` (its items as sent), in item order."""
    out: list[Violation] = []
    if not history:
        out.append(Violation("empty-input", "input",
                             "Invalid 'input': empty array. Expected an array with minimum length 1, but got an "
                             "empty array instead."))
        return out
    calls: dict[str, int] = {}
    answered: dict[str, int] = {}
    for n, item in enumerate(history):
        kind = item.type
        if kind == "message":
            _message_rules(n, item, out)
        elif kind == "function_call":
            _call_rules(n, item, out)
            call_id = item.call_id
            if call_id is not None:
                if call_id in calls:
                    out.append(Violation("duplicate-call-id", f"input.{n}",
                                         f"input.{n}.call_id: '{call_id}' is the call_id of an earlier function_call "
                                         f"(input.{calls[call_id]})", ids=(call_id,)))
                else:
                    calls[call_id] = n
        elif kind == "function_call_output":
            call_id = item.call_id
            if call_id is None:
                out.append(Violation("item-shape", f"input.{n}.call_id",
                                     f"input.{n}.call_id: expected a string (the call_id of the call it answers)"))
            elif call_id not in calls:
                out.append(Violation("orphan-function-call-output", f"input.{n}",
                                     f"No tool call found for function call output with call_id {call_id}.",
                                     ids=(call_id,)))
            elif call_id in answered:
                out.append(Violation("duplicate-function-call-output", f"input.{n}",
                                     f"input.{n}: a second function_call_output for call_id '{call_id}' (the first is "
                                     f"input.{answered[call_id]})", ids=(call_id,)))
            else:
                answered[call_id] = n
            if "output" not in item.raw:
                out.append(Violation("item-shape", f"input.{n}.output",
                                     f"input.{n}.output: missing: an output item carries its output"))
        elif kind == "reasoning":
            if not isinstance(item.raw.get("summary"), list):
                problem = (f"Missing required parameter: 'input[{n}].summary'." if "summary" not in item.raw
                           else f"input.{n}.summary: expected an array of summary_text parts")
                rule = "missing-summary" if "summary" not in item.raw else "item-shape"
                out.append(Violation(rule, f"input.{n}.summary", problem))
            following = history[n + 1] if n + 1 < len(history) else None
            if not follows_reasoning(following):
                out.append(Violation("reasoning-without-following-item", f"input.{n}", _reasoning_text(item)))
    for call_id, n in calls.items():
        if call_id not in answered:
            out.append(Violation("unanswered-function-call", f"input.{n}",
                                 f"No tool output found for function call {call_id}.", ids=(call_id,)))
    out.sort(key=lambda v: _order(v.path))
    return out


def _order(path: str) -> tuple[int, str]:
    bits = path.split(".")
    return (int(bits[1]) if len(bits) > 1 and bits[1].isdigit() else -1, path)


# ----------------------------------------------------------------------------------------------
# Repair


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str)
            else json.dumps(p, ensure_ascii=False, separators=(",", ":"))
            for p in output
        )
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def orphan_message(item: Item) -> Item:
    """An orphan output kept as a user message (``"Tool result:\\n"`` + its text), as the other dialects
    keep an orphan result (contract §3.4)."""
    text = f"{CONVERSION_PREFIX}\n" + _output_text(item.raw.get("output"))
    return Item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def synthetic_output(call_id: str) -> Item:
    """The output standing in for one that never came: the text the other dialects store (domain §4.1)."""
    return Item({"type": "function_call_output", "call_id": call_id, "output": INTERRUPTED_TEXT})


def repair(history: Sequence[Item], *, orphans: str = "to_text") -> tuple[ResponsesHistory, RepairReport]:
    """The smallest change that pairs every call with one output and every reasoning item with its item.

    An unanswered call gets a synthetic output right after the run of calls it is in (parallel calls
    are consecutive items); an orphan output becomes a user message (``to_text``, the default: what the
    model saw is kept) or is dropped (``drop``); a second output for a call is dropped (the first is the
    one the model saw); a reasoning item without ``summary`` gets ``summary: []`` (the field's own fix);
    a reasoning item left without its following item is dropped (reasoning cannot be made up). Every
    other item, unknown types included, is the input's own object, unchanged.
    """
    from ctxmodel.repair import ORPHANS, Change, RepairReport

    if orphans not in ORPHANS:
        from ctxmodel.errors import UsageError

        raise UsageError(f"repair: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    source = tuple(history)
    if not validate(source):
        return source, RepairReport(origins=tuple(range(len(source))))
    seen_calls: set[str] = set()
    answered: set[str] = set()
    kept: list[tuple[Item, int | None]] = []
    changes: list[Change] = []
    orphan_action = "orphan output turned to user text" if orphans == "to_text" else "orphan output dropped"
    pending: list[tuple[str, int]] = []  # unanswered calls of the current run, and their index

    def close_run() -> None:
        for call_id, index in pending:
            kept.append((synthetic_output(call_id), None))
            changes.append(Change(index, "unanswered-function-call", "synthetic output added (interrupted)", call_id,
                                  created=True, root="input"))
        pending.clear()

    for n, item in enumerate(source):
        if not item.is_call():
            close_run()
        if item.is_call():
            call_id = item.call_id
            kept.append((item, n))
            if call_id is not None and call_id not in seen_calls:
                seen_calls.add(call_id)
                later = any(o.is_output() and o.call_id == call_id for o in source[n + 1:])
                if not later:
                    pending.append((call_id, n))
            continue
        if item.is_output() and item.call_id is not None:
            call_id = item.call_id
            if call_id not in seen_calls:
                changes.append(Change(n, "orphan-function-call-output", orphan_action, call_id, root="input"))
                if orphans == "to_text":
                    kept.append((orphan_message(item), n))
                continue
            if call_id in answered:
                changes.append(Change(n, "duplicate-function-call-output", "second output for the call dropped",
                                      call_id, root="input"))
                continue
            answered.add(call_id)
        if item.is_reasoning() and "summary" not in item.raw:
            fixed = dict(item.raw)
            fixed["summary"] = []
            kept.append((Item(fixed), n))
            changes.append(Change(n, "missing-summary", "empty summary added", root="input"))
            continue
        kept.append((item, n))
    close_run()
    # A reasoning item is judged on what follows it in the repaired request, so drops run last.
    result: list[Item] = []
    origins: list[int | None] = []
    for k, (item, origin) in enumerate(kept):
        following = kept[k + 1][0] if k + 1 < len(kept) else None
        if item.is_reasoning() and not follows_reasoning(following):
            changes.append(Change(origin if origin is not None else k, "reasoning-without-following-item",
                                  "reasoning item without its following item dropped", root="input"))
            continue
        result.append(item)
        origins.append(origin)
    remaining = validate(result)
    ordered = sorted(changes, key=lambda c: (c.index, c.created))
    return tuple(result), RepairReport(tuple(ordered), tuple(origins), tuple(remaining))


# ----------------------------------------------------------------------------------------------
# The compact view


def _excerpt(value: str) -> str:
    from ctxmodel.render import _EXCERPT, _printable

    if len(value) <= _EXCERPT:
        return f'"{_printable(value)}"'
    return f'"{_printable(value[:_EXCERPT].rstrip() or value[:_EXCERPT])}…"'


def _parts_tokens(content: Any, n: int, marked_parts: set[tuple[int, int]]) -> list[str]:
    from ctxmodel.render import _printable

    if isinstance(content, str):
        return [_excerpt(content)]
    if not isinstance(content, list):
        return ["null" if content is None else "?"]
    tokens: list[str] = []
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            token = _excerpt(part["text"])
        elif kind == "input_image":
            token = "[image]"
        else:
            token = f"[{_printable(str(kind))}]"
        tokens.append((">>" if (n, k) in marked_parts else "") + token)
    return tokens


def render(history: Sequence[Item], *, highlight: Collection[str] = ()) -> str:
    """One line per item, with the other views' marks: ``[use ID:NAME]`` for a call, ``[result ID]``
    for an output (``(synthetic)`` for the stand-in), ``[reasoning ID]`` with ``+enc`` when it carries
    encrypted content, ``>>`` where the oracle points (``input.N``, ``input.N.content.K``)."""
    from ctxmodel.render import IdLabels, _printable

    label = IdLabels([i.call_id for i in history if i.call_id is not None])
    marked: set[int] = set()
    parts: set[tuple[int, int]] = set()
    for path in highlight:
        bits = path.split(".")
        if len(bits) >= 2 and bits[0] == "input" and bits[1].isdigit():
            marked.add(int(bits[1]))
            if len(bits) >= 4 and bits[2] == "content" and bits[3].isdigit():
                parts.add((int(bits[1]), int(bits[3])))
    width = len(str(max(len(history) - 1, 0)))
    lines: list[str] = []
    for n, item in enumerate(history):
        kind = item.type
        shown = label(item.call_id) if item.call_id is not None else "?"
        if kind == "message":
            what = item.role or "?"
            tokens = _parts_tokens(item.raw.get("content"), n, parts)
        elif kind == "function_call":
            what = "call"
            name = item.raw.get("name")
            tokens = [f"[use {shown}:{_printable(name) if isinstance(name, str) else '?'}]"]
        elif kind == "function_call_output":
            what = "output"
            synthetic = " (synthetic)" if item.raw.get("output") == INTERRUPTED_TEXT else ""
            tokens = [f"[result {shown}{synthetic}]"]
            output = item.raw.get("output")
            if isinstance(output, str) and not synthetic:
                tokens.append(_excerpt(output))
        elif kind == "reasoning":
            what = "reasoning"
            summary = item.raw.get("summary")
            enc = " +enc" if isinstance(item.raw.get("encrypted_content"), str) else ""
            tokens = [f"[reasoning {_printable(item.id or '?')}{enc}]"]
            if isinstance(summary, list):
                tokens.extend(_parts_tokens(summary, n, set()))
            else:
                tokens.append("summary=missing")
        else:
            what = _printable(kind)
            tokens = []
        head = f"#{n:<{width}} {what:<9}"
        if highlight:
            head = (">> " if n in marked else "   ") + head
        lines.append((head + "  " + " ".join(tokens)).rstrip())
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Counting


def count(history: Sequence[Item], counter: Counter) -> list[Counted]:
    """Raw tokens per item, by the reference's Responses count (``ctxmodel.tokens.responses``)."""
    from ctxmodel.tokens.responses import raw_responses_item

    return [Counted(f"input.{n}", item.type, raw_responses_item(counter, item.raw)) for n, item in enumerate(history)]


# ----------------------------------------------------------------------------------------------
# The dialect record


class OpenAIResponses:
    """OpenAI Responses ``input`` items (``ctxmodel.dialects.Dialect``)."""

    name = "openai-responses"
    title = "OpenAI Responses input"
    rules = RULES
    #: No hidden items in this format: the file's items are the request.
    has_visibility = False
    #: The contract's normalize (contract §3) is written on Anthropic Messages.
    normalizes = False

    def detect(self, value: Any) -> int:
        return detect(value)

    def load(self, value: Any) -> ResponsesHistory:
        return load(value)

    def dump(self, history: ResponsesHistory) -> list[JsonMessage]:
        return dump(history)

    def json_of(self, message: Item) -> JsonMessageView:
        return message.raw

    def validate(self, history: ResponsesHistory) -> list[Violation]:
        return validate(history)

    def render(self, history: ResponsesHistory, *, highlight: Collection[str] = ()) -> str:
        return render(history, highlight=highlight)

    def repair(self, history: ResponsesHistory, *, orphans: str = "to_text") -> tuple[ResponsesHistory, RepairReport]:
        return repair(history, orphans=orphans)

    def count(self, history: ResponsesHistory, counter: Counter) -> list[Counted]:
        return count(history, counter)


DIALECT = OpenAIResponses()
