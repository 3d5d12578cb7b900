"""Amazon Bedrock Converse ``messages`` as a dialect: codec, acceptance oracle, repair, view and count.

The history is kept as the JSON it was read from, a tuple of :class:`ConverseMessage` views over the
objects (as the Responses and Gemini dialects keep theirs): blocks carry keys this module never
reads (``cachePoint``, ``guardContent``, ``document``, ``video``, a block's provider extras), and a
view keeps every key, its order and its value, so ``dump(load(x)) == x`` for any array of objects.
A Converse block has no ``type``: it is an object with one key naming its kind (``text``,
``image``, ``toolUse``, ``toolResult``, ``reasoningContent``...).

The rules (domain §5.10): each ``toolUse`` of an assistant message is answered in the very next
message, a user message, by a ``toolResult`` with its ``toolUseId``, and that message holds no more
results than the turn before has calls; the conversation starts with a user message and roles
alternate; text blocks are not blank; an error result has content. Texts the API is known to return
are quoted verbatim; the rules marked *inferred*, *not confirmed* or *shape* in :data:`RULES` say how
far their texts are confirmed.
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
    "BedrockConverse",
    "ConverseHistory",
    "ConverseMessage",
    "count",
    "detect",
    "dump",
    "exceeds_text",
    "expected_text",
    "load",
    "render",
    "repair",
    "validate",
]

ROLES = frozenset({"user", "assistant"})
#: Block kinds only Converse writes this way (a one-key object, no ``type``), for detection.
_KINDS = frozenset({"toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent"})

FIRST_USER_TEXT = (
    "A conversation must start with a user message. Try again with a conversation that starts with a user message."
)
ALTERNATE_TEXT = (
    "A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
    "between user and assistant roles and try again."
)

RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "missing-tool-result": Rule(
            "each toolUse of an assistant message is answered in the next message by a toolResult with its toolUseId",
            "domain §5.10 (provider text; a toolUse at the end of the request: inferred)",
        ),
        "excess-tool-results": Rule(
            "a message holds no more toolResult blocks than the turn before it has toolUse blocks",
            "domain §5.10 (provider text as the field quotes it; not confirmed in a public thread here)",
        ),
        "first-message-user": Rule(
            "the conversation starts with a user message", "domain §5.10 (provider text; relaxed for some models)"
        ),
        "roles-alternate": Rule("user and assistant messages alternate", "domain §5.10 (provider text)"),
        "blank-text": Rule("a text block is not empty or blank", "domain §5.10 (provider phrase; wording ours)"),
        "error-result-empty": Rule(
            "a toolResult with status error has content", "domain §5.10 (provider text)"
        ),
        "message-shape": Rule(
            "a message has role user or assistant and a non-empty content array of block objects",
            "domain §5.10 (shape, from the API's Message type)",
        ),
        "empty-messages": Rule("a request has at least one message", "domain §5.10 (inferred)"),
    }
)


def expected_text(n: int, ids: Sequence[str]) -> str:
    """The API's text for calls of the turn before ``messages.n`` that it does not answer."""
    return f"Expected toolResult blocks at messages.{n}.content for the following Ids: {', '.join(ids)}"


def exceeds_text(n: int) -> str:
    return (f"The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse blocks of "
            "previous turn.")


# ----------------------------------------------------------------------------------------------
# The model: a typed view over each message object


@attrs.frozen
class ConverseMessage:
    """One ``messages`` entry: the object as read (never mutated), and the fields the rules read."""

    raw: Mapping[str, Any]

    @property
    def role(self) -> str | None:
        role = self.raw.get("role")
        return role if isinstance(role, str) else None

    @property
    def blocks(self) -> list[Mapping[str, Any]]:
        content = self.raw.get("content")
        return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []

    def uses(self) -> list[Mapping[str, Any]]:
        """The ``toolUse`` values (the call inside each block)."""
        return [b["toolUse"] for b in self.blocks if isinstance(b.get("toolUse"), dict)]

    def results(self) -> list[Mapping[str, Any]]:
        return [b["toolResult"] for b in self.blocks if isinstance(b.get("toolResult"), dict)]


ConverseHistory = tuple[ConverseMessage, ...]


def _id(value: Mapping[str, Any]) -> str | None:
    tid = value.get("toolUseId")
    return tid if isinstance(tid, str) else None


def load(value: Any) -> ConverseHistory:
    """The messages of a JSON array, copied. Refuses only what is not a list of objects."""
    return tuple(ConverseMessage(m) for m in json_objects(value, "messages", "messages", "a message object"))


def dump(history: Iterable[ConverseMessage]) -> list[JsonMessage]:
    """The JSON array again: every key, its order and its value as loaded (copies)."""
    return [copy_json(dict(m.raw)) for m in history]


def detect(value: Any) -> int:
    """How strongly an array reads as Converse messages: blocks without ``type`` holding a key only
    Converse has. A text-only Converse history (``{"text": ..}`` blocks) reads as Anthropic blocks
    that lost their type, and is refused as those are unless ``--dialect bedrock-converse`` says."""
    if not isinstance(value, list):
        return 0
    score = plain = 0
    for message in value:
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict) or "type" in block:
                continue
            if _KINDS & set(block):
                score += 5
            elif set(block) <= {"text", "image", "document", "video"} and block:
                plain += 2
    return score + plain if score else 0


# ----------------------------------------------------------------------------------------------
# The oracle


def _shape(n: int, message: ConverseMessage, out: list[Violation]) -> None:
    path = f"messages.{n}"
    if message.role not in ROLES:
        shown = f"'{message.role}'" if message.role is not None else "missing"
        out.append(Violation("message-shape", f"{path}.role",
                             f"{path}.role: {shown}: a message's role is user or assistant"))
        return
    content = message.raw.get("content")
    if not isinstance(content, list) or not content or any(not isinstance(b, dict) for b in content):
        out.append(Violation("message-shape", f"{path}.content",
                             f"{path}.content: expected a non-empty array of content blocks"))
        return
    for k, block in enumerate(content):
        text = block.get("text")
        if "text" in block and (not isinstance(text, str) or not text.strip()):
            out.append(Violation("blank-text", f"{path}.content.{k}.text",
                                 f"{path}.content.{k}.text: the text block is blank (text content blocks must be "
                                 "non-empty)"))
        result = block.get("toolResult")
        if isinstance(result, dict) and result.get("status") == "error" and not result.get("content"):
            out.append(Violation("error-result-empty", f"{path}.content.{k}.toolResult",
                                 f"The content field at {path}.content.{k}.toolResult cannot be empty when status "
                                 "value is error.", ids=tuple(i for i in (_id(result),) if i is not None)))


def validate(history: Sequence[ConverseMessage]) -> list[Violation]:
    """Every violation of the request ``history`` (its messages as sent), in message order."""
    out: list[Violation] = []
    if not history:
        out.append(Violation("empty-messages", "messages", "messages: a request holds at least one message"))
        return out
    for n, message in enumerate(history):
        _shape(n, message, out)
    if history[0].role == "assistant":
        out.append(Violation("first-message-user", "messages.0", FIRST_USER_TEXT))
    for n in range(1, len(history)):
        if history[n].role in ROLES and history[n].role == history[n - 1].role:
            out.append(Violation("roles-alternate", f"messages.{n}", ALTERNATE_TEXT))
    for n, message in enumerate(history):
        before = history[n - 1] if n > 0 else None
        wanted = before.uses() if before is not None and before.role == "assistant" else []
        given = message.results() if message.role == "user" else []
        if len(given) > len(wanted):
            out.append(Violation("excess-tool-results", f"messages.{n}.content", exceeds_text(n),
                                 ids=tuple(i for i in map(_id, given) if i is not None)))
        answered = {_id(r) for r in given}
        missing = [i for i in map(_id, wanted) if i is not None and i not in answered]
        if missing and message.role == "user":
            out.append(Violation("missing-tool-result", f"messages.{n}.content", expected_text(n, missing),
                                 ids=tuple(missing)))
        if message.role == "assistant":
            following = history[n + 1] if n + 1 < len(history) else None
            if message.uses() and (following is None or following.role != "user"):
                ids = [i for i in map(_id, message.uses()) if i is not None]
                out.append(Violation("missing-tool-result", f"messages.{n + 1}.content", expected_text(n + 1, ids),
                                     ids=tuple(ids)))
    out.sort(key=lambda v: _order(v.path))
    return out


def _order(path: str) -> tuple[int, str]:
    bits = path.split(".")
    return (int(bits[1]) if len(bits) > 1 and bits[1].isdigit() else -1, path)


# ----------------------------------------------------------------------------------------------
# Repair


def synthetic_result(tool_use_id: str) -> dict[str, Any]:
    """The result standing in for one that never came: the text the other dialects store (domain §4.1)."""
    return {"toolResult": {"toolUseId": tool_use_id, "content": [{"text": INTERRUPTED_TEXT}], "status": "error"}}


def _result_text(result: Mapping[str, Any]) -> str:
    content = result.get("content")
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str)
                     else json.dumps(b, ensure_ascii=False, separators=(",", ":")) for b in content)


def repair(
    history: Sequence[ConverseMessage], *, orphans: str = "to_text"
) -> tuple[ConverseHistory, RepairReport]:
    """The smallest change that answers every toolUse in the next message, once, by its id.

    Consecutive messages of one role are joined first, in order (results split over several user
    messages are the field's most reported shape, and joining them is its fix). Then a call's missing
    result is added after the results given (a new user message when the next one is not a user's),
    as an error result with the interrupted text; a result that answers no call of the turn before
    becomes text (``to_text``, the default) or is dropped (``drop``), and a second result for a call is
    dropped; a message left with no block is dropped. A conversation that starts with the assistant,
    blank text and other shapes are left and reported. Every other message is the input's own object.
    """
    from ctxmodel.repair import ORPHANS, Change, RepairReport

    if orphans not in ORPHANS:
        from ctxmodel.errors import UsageError

        raise UsageError(f"repair: orphans={orphans!r}: expected one of {'|'.join(ORPHANS)}")
    source = tuple(history)
    if not validate(source):
        return source, RepairReport(origins=tuple(range(len(source))))
    changes: list[Change] = []
    result: list[ConverseMessage] = []
    origins: list[int | None] = []
    action = "orphan result turned to text" if orphans == "to_text" else "orphan result dropped"
    joined: list[tuple[ConverseMessage, int]] = []
    for n, message in enumerate(source):
        last = joined[-1][0] if joined else None
        if last is not None and message.role in ROLES and message.role == last.role \
                and isinstance(last.raw.get("content"), list) and isinstance(message.raw.get("content"), list):
            merged = ConverseMessage({**last.raw, "content": [*last.raw["content"], *message.raw["content"]]})
            joined[-1] = (merged, joined[-1][1])
            changes.append(Change(n, "roles-alternate", f"joined to messages.{joined[-1][1]} (same role)"))
            continue
        joined.append((message, n))
    for j, (message, n) in enumerate(joined):
        before = joined[j - 1][0] if j > 0 else None
        wanted = [i for i in map(_id, before.uses()) if i is not None] if before is not None \
            and before.role == "assistant" else []
        if message.role == "user":
            blocks: list[Any] = []
            seen: set[str] = set()
            for block in message.raw.get("content") or []:
                inner = block.get("toolResult") if isinstance(block, dict) else None
                if isinstance(inner, dict):
                    tid = _id(inner)
                    if tid in seen:
                        changes.append(Change(n, "excess-tool-results", "second result for the call dropped", tid))
                        continue
                    if tid not in wanted:
                        changes.append(Change(n, "excess-tool-results", action, tid))
                        if orphans == "to_text":
                            blocks.append({"text": f"{CONVERSION_PREFIX}\n{_result_text(inner)}"})
                        continue
                    seen.add(tid)
                blocks.append(block)
            missing = [i for i in wanted if i not in seen]
            for tid in missing:
                changes.append(Change(n, "missing-tool-result", "synthetic result added (interrupted)", tid))
            at = max((k + 1 for k, b in enumerate(blocks) if isinstance(b, dict) and "toolResult" in b), default=0)
            blocks[at:at] = [synthetic_result(t) for t in missing]
            if blocks != list(message.raw.get("content") or []):
                if blocks:
                    result.append(ConverseMessage({**message.raw, "content": blocks}))
                    origins.append(n)
                continue
        result.append(message)
        origins.append(n)
        following = joined[j + 1][0] if j + 1 < len(joined) else None
        if message.role == "assistant" and message.uses() and (following is None or following.role != "user"):
            ids = [i for i in map(_id, message.uses()) if i is not None]
            for tid in ids:
                changes.append(Change(n, "missing-tool-result", "synthetic result added (interrupted)", tid,
                                      created=True))
            result.append(ConverseMessage({"role": "user", "content": [synthetic_result(t) for t in ids]}))
            origins.append(None)
    remaining = validate(result)
    ordered = sorted(changes, key=lambda c: (c.index, c.created))
    return tuple(result), RepairReport(tuple(ordered), tuple(origins), tuple(remaining))


# ----------------------------------------------------------------------------------------------
# The compact view


def _block_token(block: Mapping[str, Any], label: Any) -> str:
    from ctxmodel.render import _EXCERPT, _printable

    use, res = block.get("toolUse"), block.get("toolResult")
    if isinstance(use, dict):
        name = use.get("name")
        return f"[use {label(_id(use) or '?')}:{_printable(name) if isinstance(name, str) else '?'}]"
    if isinstance(res, dict):
        synthetic = " (synthetic)" if _result_text(res) == INTERRUPTED_TEXT else ""
        error = " error" if res.get("status") == "error" and not synthetic else ""
        return f"[result {label(_id(res) or '?')}{error}{synthetic}]"
    if "reasoningContent" in block:
        return "[reasoning]"
    text = block.get("text")
    if isinstance(text, str):
        body = _printable(text[:_EXCERPT].rstrip() or text[:_EXCERPT]) + ("…" if len(text) > _EXCERPT else "")
        return f'"{body}"'
    return f"[{_printable(next(iter(block), '?'))}]"


def render(history: Sequence[ConverseMessage], *, highlight: Collection[str] = ()) -> str:
    """One line per message, with the other views' marks: ``[use ID:NAME]``, ``[result ID]``
    (``(synthetic)`` for the stand-in), ``>>`` where the oracle points (``messages.N``,
    ``messages.N.content.K``)."""
    from ctxmodel.render import IdLabels

    label = IdLabels([i for m in history for i in (*map(_id, m.uses()), *map(_id, m.results())) if i is not None])
    marked: set[int] = set()
    blocks_marked: set[tuple[int, int]] = set()
    for path in highlight:
        bits = path.split(".")
        if len(bits) >= 2 and bits[0] == "messages" and bits[1].isdigit():
            marked.add(int(bits[1]))
            if len(bits) >= 4 and bits[2] == "content" and bits[3].isdigit():
                blocks_marked.add((int(bits[1]), int(bits[3])))
    width = len(str(max(len(history) - 1, 0)))
    lines: list[str] = []
    for n, message in enumerate(history):
        tokens = [(">>" if (n, k) in blocks_marked else "") + _block_token(b, label)
                  for k, b in enumerate(message.blocks)]
        head = f"#{n:<{width}} {message.role or '?':<9}"
        if highlight:
            head = (">> " if n in marked else "   ") + head
        lines.append((head + "  " + " ".join(tokens)).rstrip())
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Counting


def count(history: Sequence[ConverseMessage], counter: Counter) -> list[Counted]:
    """Raw tokens per block: a text block's text, any other block's JSON (what is sent), by the counter."""
    out: list[Counted] = []
    for n, message in enumerate(history):
        for k, block in enumerate(message.blocks):
            text = block.get("text")
            piece = text if isinstance(text, str) else json.dumps(block, ensure_ascii=False, separators=(",", ":"))
            out.append(Counted(f"messages.{n}.content.{k}", next(iter(block), "?"), counter.raw_text(piece)))
    return out


# ----------------------------------------------------------------------------------------------
# The dialect record


class BedrockConverse:
    """Amazon Bedrock Converse ``messages`` (``ctxmodel.dialects.Dialect``)."""

    name = "bedrock-converse"
    title = "Bedrock Converse messages"
    rules = RULES
    #: No hidden messages in this format: the file's messages are the request.
    has_visibility = False
    #: The contract's normalize (contract §3) is written on Anthropic Messages.
    normalizes = False

    def detect(self, value: Any) -> int:
        return detect(value)

    def load(self, value: Any) -> ConverseHistory:
        return load(value)

    def dump(self, history: ConverseHistory) -> list[JsonMessage]:
        return dump(history)

    def json_of(self, message: ConverseMessage) -> JsonMessageView:
        return message.raw

    def validate(self, history: ConverseHistory) -> list[Violation]:
        return validate(history)

    def render(self, history: ConverseHistory, *, highlight: Collection[str] = ()) -> str:
        return render(history, highlight=highlight)

    def repair(
        self, history: ConverseHistory, *, orphans: str = "to_text"
    ) -> tuple[ConverseHistory, RepairReport]:
        return repair(history, orphans=orphans)

    def count(self, history: ConverseHistory, counter: Counter) -> list[Counted]:
        return count(history, counter)


DIALECT = BedrockConverse()
