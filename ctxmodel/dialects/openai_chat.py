"""OpenAI Chat Completions as a dialect: its codec, its acceptance oracle, its repair, view and count.

The history is kept as the JSON it was read from: a tuple of :class:`ChatMessage`, each a thin
typed view over one message object. Chat Completions messages carry many optional keys the
pairing rules never read (``name``, ``refusal``, ``audio``, ``function_call``, provider extras such
as ``reasoning_content``), and a model class per shape would have to name each one to keep it; a
view over the object itself keeps every key, its order and its value by construction, so
``dump(load(x)) == x`` needs no per-key code, and the oracle reads only the few fields its rules
are about. Shapes the API refuses (a ``tool_calls`` entry without an id, ``arguments`` that is not
a string) are therefore *loaded* and reported by the oracle with their path, rather than refused
at load time: ``validate`` is for showing what is wrong with a file.

The rules (domain §5.5, contract §6): a ``tool`` message answers a call of the assistant message
that heads the run of ``tool`` messages it is in; each call of an assistant message is answered in
that run, once. The texts the API is known to return are quoted verbatim (typos included); the
rules marked *inferred* or *shape* in :data:`RULES` have no quoted text, and their messages are
ours.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from ctxmodel.codec import copy_json
from ctxmodel.contract_data import CONVERSION_PREFIX, INTERRUPTED_TEXT
from ctxmodel.dialects import Counted
from ctxmodel.errors import HistoryError
from ctxmodel.json_types import JsonMessage, JsonMessageView
from ctxmodel.oracle import Rule, Violation

if TYPE_CHECKING:
    from ctxmodel.repair import Change, RepairReport
    from ctxmodel.tokens import Counter

__all__ = [
    "DIALECT",
    "ROLES",
    "RULES",
    "ChatHistory",
    "ChatMessage",
    "Counted",
    "OpenAIChat",
    "count",
    "detect",
    "dump",
    "load",
    "render",
    "repair",
    "validate",
]

#: The roles Chat Completions takes (``function`` is the deprecated predecessor of ``tool``).
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
#: Content part types per role (the SDK's message param types, domain §5.5).
_PART_TYPES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "system": frozenset({"text"}),
        "developer": frozenset({"text"}),
        "user": frozenset({"text", "image_url", "input_audio", "file"}),
        "assistant": frozenset({"text", "refusal"}),
        "tool": frozenset({"text"}),
    }
)
#: Tokens of an image whose size cannot be read from a ``data:`` URL (as ``ctxmodel.tokens`` counts
#: an Anthropic image without base64 data: domain §4.6, D3).
_IMAGE_OTHER_TOKENS = 300

#: The provider's text for a tool message outside a run (sic: "preceeding").
ORPHAN_TEXT = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)

RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "tool-without-tool-calls": Rule(
            "a tool message follows, in an unbroken run of tool messages, an assistant message with tool_calls",
            "domain §5.5 (provider text)",
        ),
        "tool-call-id-not-found": Rule(
            "a tool message's tool_call_id names a call of the assistant message heading its run",
            "domain §5.5 (provider text)",
        ),
        "duplicate-tool-message": Rule(
            "one tool message per tool_call_id in a run", "domain §5.5 (provider text)"
        ),
        "unanswered-tool-calls": Rule(
            "every call of an assistant message is answered by a tool message of the run right after it",
            "domain §5.5 (provider text; a final assistant message: inferred)",
        ),
        "empty-tool-calls": Rule("tool_calls, when present, is a non-empty array", "domain §5.5 (provider text)"),
        "empty-function-name": Rule("a tool call's function.name is a non-empty string", "domain §5.5 (provider text)"),
        "duplicate-tool-call-id": Rule(
            "the calls of one assistant message have distinct ids", "domain §5.5 (inferred)"
        ),
        "tool-call-shape": Rule(
            "a tool call is an object with a string id, a type and function.name / function.arguments strings",
            "domain §5.5 (shape, from the SDK's types)",
        ),
        "tool-message-shape": Rule("a tool message has a string tool_call_id", "domain §5.5 (shape, SDK types)"),
        "missing-content": Rule(
            "content is present and non-null, except on an assistant message with tool_calls or function_call",
            "domain §5.5 (shape, SDK types)",
        ),
        "content-shape": Rule(
            "content is a string or an array of parts of the types the role takes", "domain §5.5 (shape, SDK types)"
        ),
        "unknown-role": Rule(
            "role is one of system, developer, user, assistant, tool, function", "domain §5.5 (shape)"
        ),
        "empty-messages": Rule("a request has at least one message", "domain §5.5 (provider text)"),
    }
)


# ----------------------------------------------------------------------------------------------
# The model: a typed view over each message object


@attrs.frozen
class ChatMessage:
    """One Chat Completions message: the object as read (never mutated), and the fields rules read."""

    raw: Mapping[str, Any]

    @property
    def role(self) -> str:
        role = self.raw["role"]
        assert isinstance(role, str)
        return role

    @property
    def content(self) -> Any:
        return self.raw.get("content")

    @property
    def tool_calls(self) -> Any:
        """The ``tool_calls`` value as stored (``None`` when absent), whatever its shape."""
        return self.raw.get("tool_calls")

    @property
    def tool_call_id(self) -> Any:
        return self.raw.get("tool_call_id")

    def call_ids(self) -> list[str]:
        """The string ids of this assistant message's calls, in order, repeats kept."""
        calls = self.tool_calls if self.role == "assistant" else None
        if not isinstance(calls, list):
            return []
        return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]

    def calls_tools(self) -> bool:
        """An assistant message whose answers must follow it (a non-empty ``tool_calls`` array)."""
        return self.role == "assistant" and isinstance(self.tool_calls, list) and bool(self.tool_calls)


ChatHistory = tuple[ChatMessage, ...]


def load(value: Any) -> ChatHistory:
    """The messages of a JSON array, copied. Refuses only what is not a list of role-bearing objects."""
    if not isinstance(value, list):
        raise HistoryError("messages", f"expected an array of messages, got {type(value).__name__}")
    out: list[ChatMessage] = []
    for n, message in enumerate(value):
        if not isinstance(message, dict):
            raise HistoryError(f"messages.{n}", "expected a message object")
        if not isinstance(message.get("role"), str):
            raise HistoryError(f"messages.{n}.role", "expected a string")
        out.append(ChatMessage(copy_json(message)))
    return tuple(out)


def dump(history: Iterable[ChatMessage]) -> list[JsonMessage]:
    """The JSON array again: every key, its order and its value as loaded (copies)."""
    return [copy_json(dict(m.raw)) for m in history]


def detect(value: Any) -> int:
    """How strongly a messages array reads as Chat Completions: the marks only this dialect has."""
    if not isinstance(value, list):
        return 0
    score = 0
    for message in value:
        if not isinstance(message, dict):
            continue
        if message.get("role") in ("tool", "system", "developer", "function"):
            score += 3
        if "tool_calls" in message or "tool_call_id" in message or "function_call" in message:
            score += 3
        content = message.get("content")
        if content is None and "content" in message:
            score += 1
        if isinstance(content, list):
            score += sum(2 for p in content if isinstance(p, dict) and p.get("type") in ("image_url", "input_audio"))
    return score


# ----------------------------------------------------------------------------------------------
# The oracle


def _unanswered_text(ids: Sequence[str]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}"
    )


def _a(role: str) -> str:
    return ("an " if role[:1] in "aeiou" else "a ") + role


def _part_rules(n: int, message: ChatMessage, out: list[Violation]) -> None:
    role, content = message.role, message.content
    path = f"messages.{n}"
    if content is None:
        calls = message.tool_calls is not None or message.raw.get("function_call") is not None
        exempt = role == "assistant" and calls
        if not exempt:
            what = "missing" if "content" not in message.raw else "null"
            out.append(Violation("missing-content", f"{path}.content",
                                 f"{path}.content: {what}: {_a(role)} message needs content"))
        return
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        out.append(Violation("content-shape", f"{path}.content",
                             f"{path}.content: expected a string or an array of content parts"))
        return
    allowed = _PART_TYPES.get(role, frozenset())
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str) or kind not in allowed:
            shown = f"'{kind}'" if isinstance(kind, str) else "no type"
            out.append(Violation("content-shape", f"{path}.content.{k}",
                                 f"{path}.content.{k}: {_a(role)} message takes {' or '.join(sorted(allowed))} parts, "
                                 f"not {shown}"))


def _call_rules(n: int, calls: Any, out: list[Violation]) -> None:
    path = f"messages.{n}.tool_calls"
    if not isinstance(calls, list):
        out.append(Violation("tool-call-shape", path, f"{path}: expected an array of tool calls"))
        return
    if not calls:
        out.append(Violation("empty-tool-calls", path,
                             f"Invalid 'messages[{n}].tool_calls': empty array. Expected an array with minimum length "
                             "1, but got an empty array instead."))
        return
    seen: set[str] = set()
    for k, call in enumerate(calls):
        where = f"{path}.{k}"
        problems: list[str] = []
        if not isinstance(call, dict):
            out.append(Violation("tool-call-shape", where, f"{where}: expected a tool call object"))
            continue
        call_id = call.get("id")
        ids = (call_id,) if isinstance(call_id, str) else ()
        if not isinstance(call_id, str):
            problems.append("id: expected a string")
        kind = call.get("type")
        if kind == "custom":
            body = call.get("custom")
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                problems.append("custom.name: expected a string")
        else:
            if kind != "function":
                problems.append("type: expected 'function' (or 'custom')")
            function = call.get("function")
            if not isinstance(function, dict):
                problems.append("function: expected an object with name and arguments")
            else:
                name = function.get("name")
                if not isinstance(name, str):
                    problems.append("function.name: expected a string")
                elif not name:
                    out.append(Violation(
                        "empty-function-name", where,
                        f"Invalid 'messages[{n}].tool_calls[{k}].function.name': empty string. Expected a string with "
                        "minimum length 1, but got an empty string instead.", ids=ids))
                if not isinstance(function.get("arguments"), str):
                    problems.append("function.arguments: expected a string (the arguments as JSON text)")
        for problem in problems:
            out.append(Violation("tool-call-shape", where, f"{where}.{problem}", ids=ids))
        if isinstance(call_id, str):
            if call_id in seen:
                out.append(Violation("duplicate-tool-call-id", where,
                                     f"{where}.id: '{call_id}' is the id of an earlier call of the same message",
                                     ids=ids))
            seen.add(call_id)


def validate(history: Sequence[ChatMessage]) -> list[Violation]:
    """Every violation of the request ``history`` (its messages as sent), in message order."""
    out: list[Violation] = []
    if not history:
        out.append(Violation("empty-messages", "messages",
                             "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                             "empty array instead."))
        return out
    head: int | None = None  # the assistant message heading the current run of tool messages
    calls: list[str] = []
    answered: dict[str, int] = {}

    def close_run() -> None:
        if head is None:
            return
        missing = [c for c in dict.fromkeys(calls) if c not in answered]
        if missing:
            out.append(Violation("unanswered-tool-calls", f"messages.{head}", _unanswered_text(missing),
                                 ids=tuple(missing)))

    for n, message in enumerate(history):
        role = message.role
        if role not in ROLES:
            out.append(Violation("unknown-role", f"messages.{n}.role",
                                 f"messages.{n}.role: '{role}' is not a Chat Completions role"))
        if role != "tool":
            close_run()
            head, calls, answered = None, [], {}
        if role in _PART_TYPES:
            _part_rules(n, message, out)
        if role == "assistant" and message.tool_calls is not None:
            _call_rules(n, message.tool_calls, out)
            if message.calls_tools():
                head, calls = n, message.call_ids()
        if role != "tool":
            continue
        tool_id = message.tool_call_id
        if not isinstance(tool_id, str):
            out.append(Violation("tool-message-shape", f"messages.{n}.tool_call_id",
                                 f"messages.{n}.tool_call_id: expected a string"))
            if head is None:
                out.append(Violation("tool-without-tool-calls", f"messages.{n}", ORPHAN_TEXT))
            continue
        if head is None:
            out.append(Violation("tool-without-tool-calls", f"messages.{n}", ORPHAN_TEXT, ids=(tool_id,)))
        elif tool_id not in calls:
            out.append(Violation("tool-call-id-not-found", f"messages.{n}",
                                 f"Invalid parameter: 'tool_call_id' of '{tool_id}' not found in 'tool_calls' of "
                                 "previous message.", ids=(tool_id,)))
        elif tool_id in answered:
            out.append(Violation("duplicate-tool-message", f"messages.{n}",
                                 f"Invalid parameter: Duplicate value for 'tool_call_id' of '{tool_id}', in "
                                 f"messages[{answered[tool_id]}] and messages[{n}].", ids=(tool_id,)))
        else:
            answered[tool_id] = n
    close_run()
    return out


# ----------------------------------------------------------------------------------------------
# Repair


def _text_of(content: Any) -> str:
    """A tool message's content as one text (text parts joined by newlines, other parts as JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
            else json.dumps(p, ensure_ascii=False, separators=(",", ":"))
            for p in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def orphan_message(message: ChatMessage) -> ChatMessage:
    """An orphan tool message kept as a user message (``"Tool result:\\n"`` + its text), as the
    Anthropic side keeps an orphan ``tool_result`` (contract §3.4)."""
    return ChatMessage({"role": "user", "content": f"{CONVERSION_PREFIX}\n" + _text_of(message.content)})


def synthetic_answer(tool_id: str) -> ChatMessage:
    """The answer standing in for one that never came: the text the Anthropic side stores (domain §4.1)."""
    return ChatMessage({"role": "tool", "tool_call_id": tool_id, "content": INTERRUPTED_TEXT})


def repair(history: Sequence[ChatMessage], *, orphans: str = "to_text") -> tuple[ChatHistory, RepairReport]:
    """The smallest change that pairs every call with one answer in the run right after it.

    An orphan ``tool`` message (no run to be in, or an id the run's assistant did not call) becomes
    a user text (``to_text``, the default: what the model saw is kept) or is dropped (``drop``); a
    text made of an orphan inside a run goes after the run, so the run stays unbroken. A second
    answer to the same call in a run is dropped (the first is the one the model saw next to the
    call). An unanswered call gets a synthetic answer after the run's last tool message; an empty
    ``tool_calls`` array is removed. Everything else is the input's own object, unchanged.
    """
    from ctxmodel.repair import ORPHANS, Change, RepairReport

    if orphans not in ORPHANS:
        from ctxmodel.errors import UsageError

        raise UsageError(f"repair: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    source = tuple(history)
    if not validate(source):
        return source, RepairReport(origins=tuple(range(len(source))))
    result: list[ChatMessage] = []
    origins: list[int | None] = []
    changes: list[Change] = []
    orphan_action = "orphan tool message turned to user text" if orphans == "to_text" else "orphan tool message dropped"

    def orphan(i: int, rule: str, tool_id: str | None, later: list[tuple[int, ChatMessage]] | None) -> None:
        changes.append(Change(i, rule, orphan_action, tool_id))
        if orphans == "to_text":
            converted = orphan_message(source[i])
            if later is None:
                result.append(converted)
                origins.append(i)
            else:
                later.append((i, converted))

    i = 0
    while i < len(source):
        message = source[i]
        if message.role == "assistant" and isinstance(message.tool_calls, list) and not message.tool_calls:
            fixed = {k: v for k, v in message.raw.items() if k != "tool_calls"}
            result.append(ChatMessage(fixed))
            origins.append(i)
            changes.append(Change(i, "empty-tool-calls", "empty tool_calls removed"))
            i += 1
            continue
        if message.role == "tool":
            tool_id = message.tool_call_id
            orphan(i, "tool-without-tool-calls", tool_id if isinstance(tool_id, str) else None, None)
            i += 1
            continue
        result.append(message)
        origins.append(i)
        if not message.calls_tools():
            i += 1
            continue
        calls = list(dict.fromkeys(message.call_ids()))
        answered: set[str] = set()
        later: list[tuple[int, ChatMessage]] = []
        last = i
        j = i + 1
        while j < len(source) and source[j].role == "tool":
            tool_id = source[j].tool_call_id
            if isinstance(tool_id, str) and tool_id in calls and tool_id not in answered:
                answered.add(tool_id)
                result.append(source[j])
                origins.append(j)
                last = j
            elif isinstance(tool_id, str) and tool_id in answered:
                changes.append(Change(j, "duplicate-tool-message", "second answer to the call dropped", tool_id))
            else:
                rule = "tool-call-id-not-found" if isinstance(tool_id, str) else "tool-without-tool-calls"
                orphan(j, rule, tool_id if isinstance(tool_id, str) else None, later)
            j += 1
        for call_id in calls:
            if call_id not in answered:
                result.append(synthetic_answer(call_id))
                origins.append(None)
                changes.append(Change(last, "unanswered-tool-calls", "synthetic answer added (interrupted)", call_id,
                                      created=True))
        for index, converted in later:
            result.append(converted)
            origins.append(index)
        i = j
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


def _ids(history: Sequence[ChatMessage]) -> list[str]:
    out: list[str] = []
    for message in history:
        out.extend(message.call_ids())
        if message.role == "tool" and isinstance(message.tool_call_id, str):
            out.append(message.tool_call_id)
    return out


def render(history: Sequence[ChatMessage], *, highlight: Collection[str] = ()) -> str:
    """One line per message, with the Anthropic view's marks: ``[use ID:NAME]`` for a call,
    ``[result ID]`` for a tool message (``(synthetic)`` for the stand-in), ``>>`` where the oracle
    points (``messages.N``, ``messages.N.tool_calls.K``, ``messages.N.content.K``)."""
    from ctxmodel.render import IdLabels, _printable

    label = IdLabels(_ids(history))
    marked: set[int] = set()
    parts: set[tuple[int, str, int]] = set()
    for path in highlight:
        bits = path.split(".")
        if len(bits) >= 2 and bits[0] == "messages" and bits[1].isdigit():
            marked.add(int(bits[1]))
            if len(bits) >= 4 and bits[3].isdigit():
                parts.add((int(bits[1]), bits[2], int(bits[3])))
    width = len(str(max(len(history) - 1, 0)))
    lines: list[str] = []
    for n, message in enumerate(history):
        tokens: list[str] = []
        if message.role == "tool":
            tool_id = message.tool_call_id
            shown = label(tool_id) if isinstance(tool_id, str) else "?"
            synthetic = " (synthetic)" if message.content == INTERRUPTED_TEXT else ""
            tokens.append(f"[result {shown}{synthetic}]")
        content = message.content
        if isinstance(content, str):
            if message.role != "tool" or not synthetic_text(content):
                tokens.append(_excerpt(content))
        elif isinstance(content, list):
            for k, part in enumerate(content):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part, dict) and isinstance(part.get("text"), str):
                    token = _excerpt(part["text"])
                elif kind == "image_url":
                    token = "[image]"
                else:
                    token = f"[{_printable(str(kind))}]"
                tokens.append((">>" if (n, "content", k) in parts else "") + token)
        elif content is None and not message.calls_tools():
            tokens.append("null")
        calls = message.tool_calls if message.role == "assistant" else None
        if isinstance(calls, list):
            if not calls:
                tokens.append("tool_calls=[]")
            for k, call in enumerate(calls):
                call_id = call.get("id") if isinstance(call, dict) else None
                function = call.get("function") if isinstance(call, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                shown = label(call_id) if isinstance(call_id, str) else "?"
                token = f"[use {shown}:{_printable(name) if isinstance(name, str) else '?'}]"
                tokens.append((">>" if (n, "tool_calls", k) in parts else "") + token)
        head = f"#{n:<{width}} {_printable(message.role):<9}"
        if highlight:
            head = (">> " if n in marked else "   ") + head
        lines.append(head + "  " + " ".join(tokens))
    return "\n".join(lines)


def synthetic_text(content: str) -> bool:
    return content == INTERRUPTED_TEXT


# ----------------------------------------------------------------------------------------------
# Counting


def _image_tokens(url: Any) -> int:
    """``ceil(sqrt(len(base64)))`` for a ``data:`` URL, else 300: the Anthropic image rule (domain §4.6, D3)."""
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        data = url.split(",", 1)[1]
        return 0 if not data else math.isqrt(len(data) - 1) + 1
    return _IMAGE_OTHER_TOKENS


def count(history: Sequence[ChatMessage], counter: Counter) -> list[Counted]:
    """Raw tokens per piece, by the Anthropic counting rules carried over (domain §4.6):

    string content and text (and refusal) parts: their text; an ``image_url`` part: the image rule;
    a call: ``Tool: NAME`` and ``Arguments: ARGUMENTS`` on two lines, the arguments string as sent;
    a ``tool`` message: ``Tool Result (ID)`` then its text, as one piece; other parts count 0.
    """
    out: list[Counted] = []
    for n, message in enumerate(history):
        path = f"messages.{n}"
        content = message.content
        if message.role == "tool":
            tool_id = message.tool_call_id
            text = f"Tool Result ({tool_id if isinstance(tool_id, str) else ''})\n" + _text_of(content)
            out.append(Counted(path, "tool", counter.raw_text(text)))
        elif isinstance(content, str):
            out.append(Counted(f"{path}.content", "text", counter.raw_text(content)))
        elif isinstance(content, list):
            for k, part in enumerate(content):
                kind = part.get("type") if isinstance(part, dict) else None
                where = f"{path}.content.{k}"
                if isinstance(part, dict) and kind in ("text", "refusal") and isinstance(part.get(kind), str):
                    out.append(Counted(where, str(kind), counter.raw_text(part[str(kind)])))
                elif isinstance(part, dict) and kind == "image_url":
                    image = part.get("image_url")
                    url = image.get("url") if isinstance(image, dict) else None
                    out.append(Counted(where, "image_url", _image_tokens(url)))
                else:
                    out.append(Counted(where, str(kind), 0))
        calls = message.tool_calls if message.role == "assistant" else None
        for k, call in enumerate(calls if isinstance(calls, list) else []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name, arguments = function.get("name"), function.get("arguments")
            text = f"Tool: {name if isinstance(name, str) else ''}\nArguments: "
            text += arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            out.append(Counted(f"{path}.tool_calls.{k}", "tool_call", counter.raw_text(text)))
    return out


# ----------------------------------------------------------------------------------------------
# The dialect record


class OpenAIChat:
    """OpenAI Chat Completions messages (``ctxmodel.dialects.Dialect``)."""

    name = "openai-chat"
    title = "OpenAI Chat Completions"
    rules = RULES
    #: No hidden messages in this format: the file's messages are the request.
    has_visibility = False
    #: The contract's normalize (contract §3) is written on Anthropic Messages.
    normalizes = False

    def detect(self, value: Any) -> int:
        return detect(value)

    def load(self, value: Any) -> ChatHistory:
        return load(value)

    def dump(self, history: ChatHistory) -> list[JsonMessage]:
        return dump(history)

    def json_of(self, message: ChatMessage) -> JsonMessageView:
        return message.raw

    def validate(self, history: ChatHistory) -> list[Violation]:
        return validate(history)

    def render(self, history: ChatHistory, *, highlight: Collection[str] = ()) -> str:
        return render(history, highlight=highlight)

    def repair(self, history: ChatHistory, *, orphans: str = "to_text") -> tuple[ChatHistory, RepairReport]:
        return repair(history, orphans=orphans)

    def count(self, history: ChatHistory, counter: Counter) -> list[Counted]:
        return count(history, counter)


DIALECT = OpenAIChat()
