"""The yardsticks of ``trim`` (contract §10), restated from the contract, in every dialect.

Chat Completions pairing is read here from domain §5.5's rules (Responses pairing in
``responses_yardsticks``), not from the dialect module that
builds and judges those requests (``ctxmodel.dialects``), and the trim terms (the last user message,
system messages, the floor, a partial of a message, the reasoning a message carries and the message
less it) from §10's own words, not from the reference trimmer (``ctxmodel.trimming``): a judge that
shared their reading would be blind to their bugs.
Anthropic pairing is the judges' own reading (``json_reading.pairing_violations``, contract §3 rules 1
and 4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxmodel.properties.converse_yardsticks import CONVERSE, block_kind, converse_pairing_violations, holds_results
from ctxmodel.properties.gemini_yardsticks import (
    GEMINI,
    gemini_less_reasoning,
    gemini_pairing_violations,
    gemini_reasoning,
    holds_responses,
)
from ctxmodel.properties.json_reading import canon, pairing_violations
from ctxmodel.properties.responses_yardsticks import RESPONSES, is_message_item, responses_pairing_violations

__all__ = [
    "CHAT",
    "chat_pairing_violations",
    "floor",
    "is_less_reasoning_of",
    "is_partial_of",
    "is_placeholder",
    "is_system",
    "last_user_index",
    "less_reasoning",
    "masked_placeholders",
    "match_in_order",
    "reasoning_of",
    "violations",
]

Msg = Mapping[str, Any]

#: The Chat Completions dialect's name (contract §7 ``dialect``).
CHAT = "openai-chat"
#: The text part types a partial may cut (Chat ``text``; Responses ``input_text`` and ``output_text``).
_TEXT_PARTS = ("text", "input_text", "output_text")


def _call_ids(message: Msg) -> list[str] | None:
    """The ids an assistant message calls, or ``None`` when it makes no call."""
    if message.get("role") != "assistant" or "tool_calls" not in message or message.get("tool_calls") is None:
        return None
    calls = message["tool_calls"]
    if not isinstance(calls, list):
        return []
    return [str(c.get("id")) for c in calls if isinstance(c, Mapping)]


def chat_pairing_violations(messages: Sequence[Msg]) -> Counter[tuple[str, str]]:
    """Domain §5.5's pairing rules, by rule and tool id: a ``tool`` message outside the run of tool
    messages right after an assistant message with calls; one in a run answering an id its assistant
    did not call; a second answer in a run; a call its run leaves unanswered (a last message's too);
    an empty ``tool_calls``."""
    out: Counter[tuple[str, str]] = Counter()
    k = 0
    while k < len(messages):
        message = messages[k]
        ids = _call_ids(message)
        if message.get("role") == "tool":
            out[("tool-without-call", str(message.get("tool_call_id")))] += 1
            k += 1
            continue
        k += 1
        if ids is None:
            continue
        if not ids and message.get("tool_calls") == []:
            out[("empty-tool-calls", "")] += 1
        answered: Counter[str] = Counter()
        while k < len(messages) and messages[k].get("role") == "tool":
            tool_id = str(messages[k].get("tool_call_id"))
            if tool_id not in ids:
                out[("tool-call-id-not-found", tool_id)] += 1
            elif answered[tool_id]:
                out[("duplicate-tool-message", tool_id)] += 1
            answered[tool_id] += 1
            k += 1
        for tool_id in dict.fromkeys(ids):
            if not answered[tool_id]:
                out[("unanswered-tool-call", tool_id)] += 1
    return out


def violations(messages: Sequence[Msg], dialect: str) -> Counter[tuple[str, str]]:
    """The pairing violations of contract §10.1 in ``dialect`` read off one request."""
    if dialect == RESPONSES:
        return responses_pairing_violations(messages)
    if dialect == CONVERSE:
        return converse_pairing_violations(messages)
    if dialect == GEMINI:
        return gemini_pairing_violations(messages)
    return chat_pairing_violations(messages) if dialect == CHAT else pairing_violations(messages)


def is_system(message: Msg, dialect: str) -> bool:
    """A system message (contract §10 terms): Chat Completions ``system`` or ``developer``, or a
    Responses ``message`` item of those roles."""
    if dialect == RESPONSES and not is_message_item(message):
        return False
    return dialect in (CHAT, RESPONSES) and message.get("role") in ("system", "developer")


def _holds_results(message: Msg) -> bool:
    if holds_results(message) or holds_responses(message):
        return True  # a Converse message of ``toolResult`` blocks, a Gemini content of ``functionResponse`` parts
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result"
                                             for b in content)


def last_user_index(messages: Sequence[Msg], dialect: str) -> int | None:
    """The last user message (contract §10 terms): in Anthropic and Converse, the last one without results."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if dialect == RESPONSES and not is_message_item(message):
            continue
        if message.get("role") == "user" and (dialect in (CHAT, RESPONSES) or not _holds_results(message)):
            return i
    return None


def floor(messages: Sequence[Msg], dialect: str, policies: Mapping[str, str]) -> list[int]:
    """The floor (contract §10 terms): what the declared policies require an answer to keep."""
    out: set[int] = set()
    system = policies.get("trimSystem", "keep")
    for i, message in enumerate(messages):
        if is_system(message, dialect) and (system == "keep" or (system == "first" and i == 0)):
            out.add(i)
    last = last_user_index(messages, dialect)
    if last is not None and policies.get("trimLastUser", "keep") == "keep":
        out.add(last)
    return sorted(out)


def _is_text_part(part: Mapping[str, Any]) -> bool:
    """A text part or block: typed (Chat, Responses, Anthropic), or a Converse ``{"text": ..}``."""
    return part.get("type") in _TEXT_PARTS or ("type" not in part and block_kind(part) == "text")


def _cut(part: Any, original: Any) -> bool:
    """``part`` is ``original`` or, for text parts, the same part with a non-empty substring of its text."""
    if canon(part) == canon(original):
        return True
    if not (isinstance(part, Mapping) and isinstance(original, Mapping)):
        return False
    if not (_is_text_part(part) and _is_text_part(original)) or original.get("type") != part.get("type"):
        return False
    text, whole = part.get("text"), original.get("text")
    rest = {k: v for k, v in part.items() if k != "text"}
    return (isinstance(text, str) and isinstance(whole, str) and bool(text) and text in whole
            and canon(rest) == canon({k: v for k, v in original.items() if k != "text"}))


def is_partial_of(message: Msg, original: Msg) -> bool:
    """A partial of ``original`` (contract §10 terms): every key but ``content`` unchanged, the
    content a cut of the original's (a substring of a string; a subsequence of parts, text parts
    cut), or, for an assistant message with calls, its text gone whole (``null``, absent or ``""``)."""
    if canon({k: v for k, v in message.items() if k != "content"}) != canon(
            {k: v for k, v in original.items() if k != "content"}):
        return False
    content, whole = message.get("content"), original.get("content")
    if content in (None, "") and whole not in (None, "") and original.get("role") == "assistant" and \
            isinstance(original.get("tool_calls"), list) and original["tool_calls"]:
        return True
    if isinstance(content, str) and isinstance(whole, str):
        return bool(content) and content in whole
    if not (isinstance(content, list) and isinstance(whole, list)) or not content:
        return False
    j = 0
    for part in content:
        while j < len(whole) and not _cut(part, whole[j]):
            j += 1
        if j == len(whole):
            return False
        j += 1
    return True


def _subsequence(short: Sequence[Any], long: Sequence[Any]) -> bool:
    it = iter(canon(x) for x in long)
    return all(any(canon(x) == y for y in it) for x in short)


def _is_tool_use(block: Any) -> bool:
    return isinstance(block, dict) and (block.get("type") == "tool_use" or block_kind(block) == "toolUse")


def _is_pruned_content_of(content: Msg, original: Msg) -> bool:
    """A Gemini content less some ``functionCall`` or ``functionResponse`` parts (and the signature
    a call part carried): every other part, in order, unchanged; every other key unchanged."""
    parts, full = content.get("parts"), original.get("parts")
    if not (isinstance(parts, list) and isinstance(full, list)) or not parts or len(parts) >= len(full):
        return False
    if canon({k: v for k, v in content.items() if k != "parts"}) != canon(
            {k: v for k, v in original.items() if k != "parts"}):
        return False

    def call(p: Any) -> bool:
        return isinstance(p, Mapping) and any(
            k in p for k in ("functionCall", "function_call", "functionResponse", "function_response"))

    others = [p for p in full if not call(p)]
    return _subsequence(parts, full) and _subsequence(others, parts)


def is_pruned_of(message: Msg, original: Msg) -> bool:
    """``original`` less some of its tool calls (contract §10, ``trimToolCalls=pairs``): in
    ``openai-chat`` its ``tool_calls`` a subsequence of the original's (the key gone, or empty, when
    none is left), every other key unchanged; in Anthropic (and Converse) its content the original's
    list less some ``tool_use`` blocks; in Gemini a content's parts less some ``functionCall`` or
    ``functionResponse`` parts. Where the dropped calls' results went is §10.1's to judge."""
    if message.get("role") == original.get("role") and "parts" in original:
        return _is_pruned_content_of(message, original)
    if message.get("role") != "assistant" or original.get("role") != "assistant":
        return False
    calls, whole = message.get("tool_calls"), original.get("tool_calls")
    if isinstance(whole, list) and whole:
        rest = {k: v for k, v in message.items() if k != "tool_calls"}
        if canon(rest) != canon({k: v for k, v in original.items() if k != "tool_calls"}):
            return False
        kept = [] if calls is None else calls
        return isinstance(kept, list) and len(kept) < len(whole) and _subsequence(kept, whole)
    content, full = message.get("content"), original.get("content")
    if not (isinstance(content, list) and isinstance(full, list)) or len(content) >= len(full):
        return False
    if canon({k: v for k, v in message.items() if k != "content"}) != canon(
            {k: v for k, v in original.items() if k != "content"}):
        return False
    others = [b for b in full if not _is_tool_use(b)]
    return _subsequence(content, full) and _subsequence(others, content)


#: The Chat Completions key of an assistant message's reasoning (contract §10.8, domain §5.8).
REASONING_KEY = "reasoning_content"

#: The Anthropic blocks that hold reasoning (contract §10.8, domain §5.2).
REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _is_reasoning_block(block: Any) -> bool:
    """An Anthropic ``thinking`` or ``redacted_thinking`` block, or a Converse ``reasoningContent``."""
    return isinstance(block, Mapping) and (block.get("type") in REASONING_BLOCKS
                                           or ("type" not in block and block_kind(block) == "reasoningContent"))


def reasoning_of(message: Msg, dialect: str) -> list[Any]:
    """The reasoning a message carries (contract §10.8), empty when none: in ``openai-chat`` its
    ``reasoning_content`` (``""`` is reasoning too: a client sends it where none was kept), in
    Anthropic its ``thinking`` and ``redacted_thinking`` blocks in their order. A list either way, so
    that "none", "the same" and "some other" are one comparison by value."""
    if dialect == CHAT:
        return [message[REASONING_KEY]] if REASONING_KEY in message else []
    if dialect == GEMINI:
        return gemini_reasoning(message)
    content = message.get("content")
    return [b for b in content if _is_reasoning_block(b)] if isinstance(content, list) else []


def less_reasoning(message: Msg, dialect: str) -> dict[str, Any]:
    """``message`` with its reasoning set aside (contract §10.8): in ``openai-chat`` without the
    ``reasoning_content`` key, in Anthropic its content less its reasoning blocks (in Converse its
    ``reasoningContent`` blocks), which may leave it empty: whether that is allowed is the caller's
    to judge."""
    if dialect == CHAT:
        return {k: v for k, v in message.items() if k != REASONING_KEY}
    if dialect == GEMINI:
        return gemini_less_reasoning(message)
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    return {**message, "content": [b for b in content if not _is_reasoning_block(b)]}


def is_less_reasoning_of(
    message: Msg, original: Msg, dialect: str, related: Callable[[Msg, Msg], bool] | None = None
) -> bool:
    """``message`` is ``original`` less its reasoning (contract §10.8, ``trimReasoning=strip``): the
    original has reasoning, ``message`` has none, and ``message`` is the original with it set aside
    (or, with ``related``, stands in that relation to it: a declared partial, a declared pruning);
    in Anthropic its content never left empty."""
    if not reasoning_of(original, dialect) or reasoning_of(message, dialect):
        return False
    if dialect != CHAT and not message.get("parts" if dialect == GEMINI else "content"):
        return False
    bare = less_reasoning(original, dialect)
    return canon(message) == canon(bare) or (related is not None and related(message, bare))


def is_placeholder(message: Msg) -> bool:
    """The shape of a message a trimmer may put where it dropped some (contract §10,
    ``trimPlaceholder=one``): a ``user`` or ``assistant`` message of text alone (a non-empty string,
    or text parts or blocks), no calls, no results, no other keys but ``name``; in Gemini a ``user``
    or ``model`` content of text parts alone (ADK's compaction summary)."""
    if "parts" in message:
        parts = message.get("parts")
        return (message.get("role") in ("user", "model") and set(message) == {"role", "parts"}
                and isinstance(parts, list) and bool(parts)
                and all(isinstance(p, Mapping) and set(p) == {"text"} and isinstance(p["text"], str) and p["text"]
                        for p in parts))
    if message.get("role") not in ("user", "assistant") or set(message) - {"role", "content", "name"}:
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content)
    return (isinstance(content, list) and bool(content)
            and all(isinstance(b, Mapping) and ((b.get("type") == "text" and set(b) <= {"type", "text"})
                                                or set(b) == {"text"}) for b in content))


def masked_placeholders(output: Sequence[Msg], history: Sequence[Msg]) -> list[Any]:
    """``output`` with every placeholder-shaped message that is not a message of ``history`` put as
    its role alone: what §10.6 compares under ``trimPlaceholder=one`` (its text may count what the
    trim dropped, which a second trim counts again)."""
    held = {canon(m) for m in history}
    return [{"placeholder": m.get("role")} if is_placeholder(m) and canon(m) not in held else m for m in output]


def match_in_order(
    output: Sequence[Msg], history: Sequence[Msg], partial: bool, pruned: bool = False, placeholder: bool = False,
    reasoning: str | None = None,
) -> tuple[list[int] | None, int, str]:
    """Each output message matched to a later input message than the one before (equal, a partial
    of it when ``partial``, or it less some tool calls when ``pruned``), the earliest first (which
    finds a match whenever one exists): ``(input indices, -1, "")``, else ``(None, first output index
    not matched, why)``, ``why`` one of ``invented``, ``cut-undeclared``, ``calls-dropped-undeclared``,
    ``duplicated``, ``moved`` (contract §10.2). With ``placeholder``, one output message of the
    placeholder's shape that matches no input message may stand where at least one input message
    was dropped (§10 ``trimPlaceholder=one``); it has no input index in the answer. With
    ``reasoning`` (a dialect), an input message less its reasoning (§10.8), or a declared partial or
    pruning of it, matches it too: whether the reasoning could go is §10.8's to judge, not order's."""
    keys = [canon(m) for m in history]

    def declared(m: Msg, original: Msg) -> bool:
        return (partial and is_partial_of(m, original)) or (pruned and is_pruned_of(m, original))

    def relation(m: Msg, i: int) -> bool:
        return (canon(m) == keys[i] or declared(m, history[i])
                or (reasoning is not None and is_less_reasoning_of(m, history[i], reasoning, declared)))

    out: list[int] = []
    at = 0
    stood: tuple[int, int] | None = None  # the placeholder's output index, the input index it skipped
    for j, message in enumerate(output):
        i = at
        while i < len(history) and not relation(message, i):
            i += 1
        if i < len(history):
            out.append(i)
            at = i + 1
            continue
        anywhere = [i for i in range(len(history)) if relation(message, i)]
        if not anywhere and placeholder and stood is None and is_placeholder(message):
            stood = (j, at)
            at += 1  # it stands for at least one input message, so the next match comes after that one
            if at > len(history):
                return None, j, "invented"  # after the input's last message: nothing was dropped there
            continue
        if stood is not None and stood[1] < len(history) and relation(message, stood[1]) and stood[1] not in out:
            return None, stood[0], "invented"  # the message it stood for is here: nothing was dropped
        if not anywhere:
            cut = not partial and any(is_partial_of(message, m) for m in history)
            dropped = not pruned and any(is_pruned_of(message, m) for m in history)
            return None, j, "cut-undeclared" if cut else "calls-dropped-undeclared" if dropped else "invented"
        if all(i in out for i in anywhere):
            return None, j, "duplicated"
        return None, j, "moved"
    return out, -1, ""
