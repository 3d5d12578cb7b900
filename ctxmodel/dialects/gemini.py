"""Gemini ``contents`` as a dialect: codec, acceptance oracle, repair, view and count.

The history is kept as the JSON it was read from, a tuple of :class:`Content` views over the objects
(as the Responses dialect keeps its items): parts carry keys this module never reads (``thought``,
``fileData``, ``executableCode``, ``videoMetadata``, provider extras), and a view keeps every key, its
order and its value, so ``dump(load(x)) == x`` for any array of objects. Both spellings a stored
history uses are read: the REST API's camelCase (``functionCall``) and the Python SDK's dumps in
snake_case (``function_call``); repair writes the spelling the content already uses.

The rules (domain §5.9): a model turn holding N ``functionCall`` parts is answered by the very next
content, a user turn holding N ``functionResponse`` parts; a call turn comes right after a user turn
or a response turn, and a response turn right after a call turn; in the current turn (everything
after the last user content that is not only function responses) the first ``functionCall`` part
of each model step carries its ``thoughtSignature``. That last rule is Gemini 3's: it is applied to
a history that holds a signature anywhere (a signing model wrote it), never to an unsigned Gemini
2.x history. Texts the API is known to return are quoted verbatim; the rules marked *inferred* or
*shape* in :data:`RULES` have none, and their messages are ours.
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
    "COUNT_TEXT",
    "DIALECT",
    "RULES",
    "SKIP_SIGNATURE",
    "Content",
    "Gemini",
    "GeminiHistory",
    "count",
    "detect",
    "dump",
    "load",
    "render",
    "repair",
    "signature_text",
    "validate",
]

ROLES = frozenset({"user", "model"})

COUNT_TEXT = (
    "Please ensure that the number of function response parts is equal to the number of function call parts of "
    "the function call turn."
)
CALL_TURN_TEXT = (
    "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
)
RESPONSE_TURN_TEXT = "Please ensure that function response turn comes immediately after a function call turn."
#: The value Google's thought-signature guide gives for a call whose signature was never received
#: (a history from another model, or one rebuilt by a client): the validator skips it.
SKIP_SIGNATURE = "skip_thought_signature_validator"

RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "function-response-count": Rule(
            "a model turn with N functionCall parts is answered by the very next content, with N functionResponse "
            "parts",
            "domain §5.9 (provider text; a call turn at the end of the request: inferred)",
        ),
        "call-turn-position": Rule(
            "a function call turn comes right after a user turn or a function response turn",
            "domain §5.9 (provider text)",
        ),
        "response-turn-position": Rule(
            "a function response turn comes right after a function call turn", "domain §5.9 (provider text)"
        ),
        "missing-thought-signature": Rule(
            "in the current turn, the first functionCall part of each model step carries its thoughtSignature "
            "(Gemini 3; applied to a history holding a signature)",
            "domain §5.9 (provider text; what position counts: inferred)",
        ),
        "function-response-id": Rule(
            "a functionResponse with an id answers the call of that id in the call turn before it",
            "domain §5.9 (inferred)",
        ),
        "content-shape": Rule(
            "a content has role user or model and a non-empty parts array of objects",
            "domain §5.9 (shape, from the API's Content type)",
        ),
        "empty-contents": Rule("a request has at least one content", "domain §5.9 (inferred)"),
    }
)

_CALL_KEYS = ("functionCall", "function_call")
_RESPONSE_KEYS = ("functionResponse", "function_response")
_SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")
_DATA_KEYS = ("inlineData", "inline_data", "fileData", "file_data")


def _first(part: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in part:
            return part[key]
    return None


# ----------------------------------------------------------------------------------------------
# The model: a typed view over each content object


@attrs.frozen
class Content:
    """One ``contents`` entry: the object as read (never mutated), and the fields the rules read."""

    raw: Mapping[str, Any]

    @property
    def role(self) -> str | None:
        role = self.raw.get("role")
        return role if isinstance(role, str) else None

    @property
    def parts(self) -> list[Mapping[str, Any]]:
        parts = self.raw.get("parts")
        return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []

    def calls(self) -> list[Mapping[str, Any]]:
        """The ``functionCall`` parts (the part objects, not the call inside)."""
        return [p for p in self.parts if isinstance(_first(p, _CALL_KEYS), dict)]

    def responses(self) -> list[Mapping[str, Any]]:
        return [p for p in self.parts if isinstance(_first(p, _RESPONSE_KEYS), dict)]

    def is_call_turn(self) -> bool:
        return self.role == "model" and bool(self.calls())

    def is_response_turn(self) -> bool:
        return self.role == "user" and bool(self.responses())


GeminiHistory = tuple[Content, ...]


def _call_of(part: Mapping[str, Any]) -> Mapping[str, Any]:
    call = _first(part, _CALL_KEYS)
    return call if isinstance(call, dict) else {}


def _response_of(part: Mapping[str, Any]) -> Mapping[str, Any]:
    response = _first(part, _RESPONSE_KEYS)
    return response if isinstance(response, dict) else {}


def _name(fn: Mapping[str, Any]) -> str:
    name = fn.get("name")
    return name if isinstance(name, str) else "?"


def _id(fn: Mapping[str, Any]) -> str | None:
    value = fn.get("id")
    return value if isinstance(value, str) and value else None


def load(value: Any) -> GeminiHistory:
    """The contents of a JSON array, copied. Refuses only what is not a list of objects."""
    return tuple(Content(c) for c in json_objects(value, "contents", "contents", "a content object"))


def dump(history: Iterable[Content]) -> list[JsonMessage]:
    """The JSON array again: every key, its order and its value as loaded (copies)."""
    return [copy_json(dict(c.raw)) for c in history]


def detect(value: Any) -> int:
    """How strongly an array reads as Gemini contents: ``parts`` arrays, the ``model`` role, call parts."""
    if not isinstance(value, list):
        return 0
    score = 0
    for content in value:
        if not isinstance(content, dict):
            continue
        if isinstance(content.get("parts"), list):
            score += 4
            score += sum(3 for p in content["parts"] if isinstance(p, dict)
                         and any(k in p for k in (*_CALL_KEYS, *_RESPONSE_KEYS, *_SIGNATURE_KEYS, *_DATA_KEYS)))
        if content.get("role") == "model":
            score += 4
    return score


# ----------------------------------------------------------------------------------------------
# The oracle


def signature_text(name: str, position: int) -> str:
    """The API's text for a call part sent without its signature (domain §5.9)."""
    return (
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
        "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
        f"function call `default_api:{name}` , position {position}. Please refer to "
        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
    )


def _signed(history: Sequence[Content]) -> bool:
    return any(isinstance(_first(p, _SIGNATURE_KEYS), str) for c in history for p in c.parts)


def current_turn_start(history: Sequence[Content]) -> int:
    """Where the current turn starts: after the last user content that is not only function responses."""
    for n in range(len(history) - 1, -1, -1):
        content = history[n]
        if content.role == "user" and any(not isinstance(_first(p, _RESPONSE_KEYS), dict) for p in content.parts):
            return n + 1
    return 0


def _shape(n: int, content: Content, out: list[Violation]) -> bool:
    path = f"contents.{n}"
    if content.role not in ROLES:
        shown = f"'{content.role}'" if content.role is not None else "missing"
        out.append(Violation("content-shape", f"{path}.role",
                             f"{path}.role: {shown}: a content's role is user or model"))
        return False
    parts = content.raw.get("parts")
    if not isinstance(parts, list) or not parts or any(not isinstance(p, dict) for p in parts):
        out.append(Violation("content-shape", f"{path}.parts",
                             f"{path}.parts: expected a non-empty array of part objects"))
        return False
    return True


def validate(history: Sequence[Content]) -> list[Violation]:
    """Every violation of the request ``history`` (its contents as sent), in content order."""
    out: list[Violation] = []
    if not history:
        out.append(Violation("empty-contents", "contents", "contents: a request holds at least one content"))
        return out
    for n, content in enumerate(history):
        _shape(n, content, out)
    for n, content in enumerate(history):
        before = history[n - 1] if n > 0 else None
        if content.is_call_turn():
            if before is None or before.role != "user":
                out.append(Violation("call-turn-position", f"contents.{n}", CALL_TURN_TEXT,
                                     ids=tuple(_name(_call_of(p)) for p in content.calls())))
            after = history[n + 1] if n + 1 < len(history) else None
            answered = after.responses() if after is not None and after.role == "user" else []
            if len(answered) != len(content.calls()):
                out.append(Violation("function-response-count", f"contents.{n + 1 if after is not None else n}",
                                     COUNT_TEXT, ids=tuple(_name(_call_of(p)) for p in content.calls())))
            ids = {_id(_call_of(p)) for p in content.calls()} - {None}
            for k, part in enumerate(after.parts if after is not None and after.role == "user" else []):
                rid = _id(_response_of(part)) if isinstance(_first(part, _RESPONSE_KEYS), dict) else None
                if rid is not None and ids and rid not in ids:
                    out.append(Violation("function-response-id", f"contents.{n + 1}.parts.{k}",
                                         f"contents.{n + 1}.parts.{k}: functionResponse id '{rid}' answers no call of "
                                         f"contents.{n}", ids=(rid,)))
        if content.is_response_turn() and (before is None or not before.is_call_turn()):
            out.append(Violation("response-turn-position", f"contents.{n}", RESPONSE_TURN_TEXT,
                                 ids=tuple(_name(_response_of(p)) for p in content.responses())))
    if _signed(history):
        for n in range(current_turn_start(history), len(history)):
            calls = history[n].calls() if history[n].role == "model" else []
            if calls and not isinstance(_first(calls[0], _SIGNATURE_KEYS), str):
                k = history[n].parts.index(calls[0])
                # position: the content's place counted from 1 (every reported first call is at 2, all
                # reported positions are even: where model turns fall; domain §5.9, inferred).
                name = _name(_call_of(calls[0]))
                out.append(Violation("missing-thought-signature", f"contents.{n}.parts.{k}",
                                     signature_text(name, n + 1), ids=(name,)))
    out.sort(key=lambda v: _order(v.path))
    return out


def _order(path: str) -> tuple[int, str]:
    bits = path.split(".")
    return (int(bits[1]) if len(bits) > 1 and bits[1].isdigit() else -1, path)


# ----------------------------------------------------------------------------------------------
# Repair


def _spelling(part: Mapping[str, Any]) -> bool:
    """Whether a part is written in snake_case (the Python SDK's dump)."""
    return "function_call" in part or "function_response" in part or "thought_signature" in part


def synthetic_response(call_part: Mapping[str, Any]) -> dict[str, Any]:
    """The response standing in for one that never came: the text the other dialects store (domain §4.1)."""
    call = _call_of(call_part)
    response: dict[str, Any] = {"name": _name(call), "response": {"error": INTERRUPTED_TEXT}}
    if _id(call) is not None:
        response = {"id": _id(call), **response}
    return {("function_response" if _spelling(call_part) else "functionResponse"): response}


def _orphan_text(part: Mapping[str, Any]) -> dict[str, Any]:
    """An orphan response kept as text (``"Tool result:\\n"`` + its JSON), as the other dialects keep one."""
    response = _response_of(part)
    body = json.dumps(response.get("response"), ensure_ascii=False, separators=(",", ":"))
    return {"text": f"{CONVERSION_PREFIX}\n{body}"}


def repair(history: Sequence[Content], *, orphans: str = "to_text") -> tuple[GeminiHistory, RepairReport]:
    """The smallest change that answers every call turn with one response per call, right after it.

    A call turn's missing responses are added, in call order, to the user turn after it (a new user
    turn when the next content is not one); responses beyond the calls' number, and a response turn
    that follows no call turn, become text (``to_text``, the default: what the model saw is kept) or
    are dropped (``drop``), a content left with no part dropped; a call part of the current turn that
    lost its signature gets Google's skip value (a signature cannot be made up). Every other content
    is the input's own object, unchanged.
    """
    from ctxmodel.repair import ORPHANS, Change, RepairReport

    if orphans not in ORPHANS:
        from ctxmodel.errors import UsageError

        raise UsageError(f"repair: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    source = tuple(history)
    if not validate(source):
        return source, RepairReport(origins=tuple(range(len(source))))
    changes: list[Change] = []
    result: list[Content] = []
    origins: list[int | None] = []
    action = "orphan response turned to text" if orphans == "to_text" else "orphan response dropped"
    signed = _signed(source)
    start = current_turn_start(source)
    n = 0
    while n < len(source):
        content = source[n]
        if content.is_call_turn():
            calls = content.calls()
            if signed and n >= start and not isinstance(_first(calls[0], _SIGNATURE_KEYS), str):
                parts = [dict(p) for p in content.parts]
                k = content.parts.index(calls[0])
                parts[k]["thought_signature" if _spelling(calls[0]) else "thoughtSignature"] = SKIP_SIGNATURE
                changes.append(Change(n, "missing-thought-signature", "skip signature added", _name(_call_of(calls[0])),
                                      root="contents"))
                content = Content({**content.raw, "parts": parts})
            result.append(content)
            origins.append(n)
            after = source[n + 1] if n + 1 < len(source) else None
            if after is not None and after.role == "user":
                parts_out: list[Any] = []
                given = 0
                for part in after.raw.get("parts") or []:
                    if isinstance(part, dict) and isinstance(_first(part, _RESPONSE_KEYS), dict):
                        given += 1
                        if given > len(calls):
                            changes.append(Change(n + 1, "function-response-count", action,
                                                  _name(_response_of(part)), root="contents"))
                            if orphans == "to_text":
                                parts_out.append(_orphan_text(part))
                            continue
                    parts_out.append(part)
                missing = calls[given:]
                for call in missing:
                    changes.append(Change(n + 1, "function-response-count", "synthetic response added (interrupted)",
                                          _name(_call_of(call)), root="contents"))
                responses = [synthetic_response(c) for c in missing]
                k = sum(1 for p in parts_out if isinstance(p, dict) and isinstance(_first(p, _RESPONSE_KEYS), dict))
                parts_out[k:k] = responses
                if parts_out != list(after.raw.get("parts") or []):
                    result.append(Content({**after.raw, "parts": parts_out}))
                else:
                    result.append(after)
                origins.append(n + 1)
                n += 2
                continue
            for call in calls:
                changes.append(Change(n, "function-response-count", "synthetic response added (interrupted)",
                                      _name(_call_of(call)), created=True, root="contents"))
            result.append(Content({"role": "user", "parts": [synthetic_response(c) for c in calls]}))
            origins.append(None)
            n += 1
            continue
        if content.is_response_turn():
            parts_out = []
            for part in content.raw.get("parts") or []:
                if isinstance(part, dict) and isinstance(_first(part, _RESPONSE_KEYS), dict):
                    changes.append(Change(n, "response-turn-position", action, _name(_response_of(part)),
                                          root="contents"))
                    if orphans == "to_text":
                        parts_out.append(_orphan_text(part))
                    continue
                parts_out.append(part)
            if parts_out:
                result.append(Content({**content.raw, "parts": parts_out}))
                origins.append(n)
            n += 1
            continue
        result.append(content)
        origins.append(n)
        n += 1
    remaining = validate(result)
    ordered = sorted(changes, key=lambda c: (c.index, c.created))
    return tuple(result), RepairReport(tuple(ordered), tuple(origins), tuple(remaining))


# ----------------------------------------------------------------------------------------------
# The compact view


def _part_token(part: Mapping[str, Any]) -> str:
    from ctxmodel.render import _EXCERPT, _printable

    if isinstance(_first(part, _CALL_KEYS), dict):
        sig = " +sig" if isinstance(_first(part, _SIGNATURE_KEYS), str) else ""
        call = _call_of(part)
        shown = f" {_printable(_id(call) or '')}" if _id(call) else ""
        return f"[use{shown}:{_printable(_name(call))}{sig}]"
    if isinstance(_first(part, _RESPONSE_KEYS), dict):
        response = _response_of(part)
        synthetic = " (synthetic)" if response.get("response") == {"error": INTERRUPTED_TEXT} else ""
        shown = f" {_printable(_id(response) or '')}" if _id(response) else ""
        return f"[result{shown}:{_printable(_name(response))}{synthetic}]"
    if any(k in part for k in _DATA_KEYS):
        return "[image]" if "inlineData" in part or "inline_data" in part else "[file]"
    text = part.get("text")
    if isinstance(text, str):
        mark = "(thought) " if part.get("thought") is True else ""
        body = _printable(text[:_EXCERPT].rstrip() or text[:_EXCERPT]) + ("…" if len(text) > _EXCERPT else "")
        return f'{mark}"{body}"'
    return f"[{_printable(next(iter(part), '?'))}]"


def render(history: Sequence[Content], *, highlight: Collection[str] = ()) -> str:
    """One line per content, with the other views' marks: ``[use ID:NAME]`` for a call part (``+sig``
    when it carries its signature), ``[result ID:NAME]`` for a response, ``>>`` where the oracle points
    (``contents.N``, ``contents.N.parts.K``)."""
    marked: set[int] = set()
    parts_marked: set[tuple[int, int]] = set()
    for path in highlight:
        bits = path.split(".")
        if len(bits) >= 2 and bits[0] == "contents" and bits[1].isdigit():
            marked.add(int(bits[1]))
            if len(bits) >= 4 and bits[2] == "parts" and bits[3].isdigit():
                parts_marked.add((int(bits[1]), int(bits[3])))
    width = len(str(max(len(history) - 1, 0)))
    lines: list[str] = []
    for n, content in enumerate(history):
        tokens = [(">>" if (n, k) in parts_marked else "") + _part_token(p) for k, p in enumerate(content.parts)]
        head = f"#{n:<{width}} {content.role or '?':<9}"
        if highlight:
            head = (">> " if n in marked else "   ") + head
        lines.append((head + "  " + " ".join(tokens)).rstrip())
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Counting


def count(history: Sequence[Content], counter: Counter) -> list[Counted]:
    """Raw tokens per part: a text part's text, any other part's JSON (what is sent), by the counter."""
    out: list[Counted] = []
    for n, content in enumerate(history):
        for k, part in enumerate(content.parts):
            text = part.get("text")
            piece = text if isinstance(text, str) else json.dumps(
                {key: v for key, v in part.items() if key not in _SIGNATURE_KEYS}, ensure_ascii=False,
                separators=(",", ":"))
            kind = next(iter(part), "?")
            out.append(Counted(f"contents.{n}.parts.{k}", kind, counter.raw_text(piece)))
    return out


# ----------------------------------------------------------------------------------------------
# The dialect record


class Gemini:
    """Gemini ``contents`` (``ctxmodel.dialects.Dialect``)."""

    name = "gemini"
    title = "Gemini contents"
    rules = RULES
    #: No hidden contents in this format: the file's contents are the request.
    has_visibility = False
    #: The contract's normalize (contract §3) is written on Anthropic Messages.
    normalizes = False

    def detect(self, value: Any) -> int:
        return detect(value)

    def load(self, value: Any) -> GeminiHistory:
        return load(value)

    def dump(self, history: GeminiHistory) -> list[JsonMessage]:
        return dump(history)

    def json_of(self, message: Content) -> JsonMessageView:
        return message.raw

    def validate(self, history: GeminiHistory) -> list[Violation]:
        return validate(history)

    def render(self, history: GeminiHistory, *, highlight: Collection[str] = ()) -> str:
        return render(history, highlight=highlight)

    def repair(self, history: GeminiHistory, *, orphans: str = "to_text") -> tuple[GeminiHistory, RepairReport]:
        return repair(history, orphans=orphans)

    def count(self, history: GeminiHistory, counter: Counter) -> list[Counted]:
        return count(history, counter)


DIALECT = Gemini()
