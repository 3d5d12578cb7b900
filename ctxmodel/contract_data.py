"""The contract's data, written once: its numbers, its fixed texts and its visibility rule on JSON.

The reference, the yardsticks, the strategies and the input-space partition each need the budget
formula, the reserve, the marker and notice texts, the error prefix and which messages a history
hides. Written in each of them, the copies drifted apart (an empty-string id hid a message in one
and not in another), so they all read this module. It holds the contract's *data*, not the
reference's decisions: the yardsticks may share it and stay independent of the reference's
functions (``ctxmodel.visibility`` keeps its own predicate on the attrs model, and a test holds the
two to agree). Core layer: it imports nothing but the JSON type names.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodel.json_types import JsonMessageView

__all__ = [
    "BEFORE_SUMMARY",
    "CONDENSED",
    "CONVERSION_PREFIX",
    "DEFAULT_RESERVE",
    "DUPLICATE_RESULT",
    "EMPTY_MESSAGES_TEXT",
    "FAILED_PREFIX",
    "FLOOR_CHARS",
    "INTERRUPTED_TEXT",
    "INVALID_JSON_PREFIX",
    "LONE_HIGH_TEXT",
    "LONE_LOW_TEXT",
    "MISSING_RESULT",
    "SERVER_PENDING",
    "TRUNCATED",
    "UNEXPECTED_RESULT",
    "UNPAIRED_HIGH_TEXT",
    "VISIBILITY_KEYS",
    "allowed_tokens",
    "distinct_tool_use_ids",
    "existing_parents",
    "hidden_reasons",
    "last_summary_index",
    "marker_text",
    "notice_text",
    "reserve_for",
    "tool_use_ids",
    "usable_window",
    "visible_mask",
    "window_for",
]

# -- the budget (contract §4) -----------------------------------------------------------------------

#: The reserve when ``maxTokens`` is zero or negative (contract §4 budget; domain §3.1, the agents'
#: ``ANTHROPIC_DEFAULT_MAX_TOKENS``).
DEFAULT_RESERVE = 8192


def reserve_for(max_tokens: int) -> int:
    """The reserve for output: ``maxTokens`` when positive, else :data:`DEFAULT_RESERVE`."""
    return max_tokens if max_tokens > 0 else DEFAULT_RESERVE


def usable_window(context_window: int) -> int:
    """``floor(0.9 * contextWindow)``, in integers.

    Integer arithmetic because ``0.9`` has no exact double (``0.9 * 13`` is ``11.700000000000001``):
    ``9 * W // 10`` is the floor by construction, where the float product lands on the right integer
    only because no product happens to fall just below one.
    """
    return (9 * context_window) // 10


def allowed_tokens(context_window: int, max_tokens: int) -> int:
    """``allowed = floor(0.9 * contextWindow) - reserve`` (contract §4 budget)."""
    return usable_window(context_window) - reserve_for(max_tokens)


def window_for(allowed: int, reserve: int) -> int:
    """The smallest ``contextWindow`` (at least 1) whose budget with ``reserve`` is ``allowed`` or more.

    What the strategies place a budget with: the history is counted first, the window follows.
    """
    window = max(1, (10 * (allowed + reserve)) // 9 - 1)
    while usable_window(window) - reserve < allowed:
        window += 1
    return window


# -- fixed texts ------------------------------------------------------------------------------------

#: Every controlled error's text starts with this (contract §4.8).
FAILED_PREFIX = "Context window recovery failed"
#: An orphan turned to text starts with this (contract §3.4; Roo-Code's wording, domain §2.3).
CONVERSION_PREFIX = "Tool result:"
#: What the agents store as the result of a call that never ran (domain §4.1); the reference's
#: synthetic result (contract §3.3) says the same.
INTERRUPTED_TEXT = "Tool execution was interrupted before completion."
#: A degraded tool-result text keeps at least this many characters (contract §4 reference choice).
FLOOR_CHARS = 200

# -- the wire (domain §5.1 empty request, §5.6 lone surrogates): the API's own texts ----------------

#: A request with no message.
EMPTY_MESSAGES_TEXT = "messages: at least one message is required"
#: Every body the API cannot parse is answered with this, then the parser's reason and place.
INVALID_JSON_PREFIX = "The request body is not valid JSON: "
#: A high surrogate escape not followed by a ``\u`` escape.
LONE_HIGH_TEXT = "no low surrogate in string"
#: A high surrogate escape followed by a ``\u`` escape that is not a low surrogate.
UNPAIRED_HIGH_TEXT = "invalid low surrogate in string"
#: A low surrogate escape with no high one before it.
LONE_LOW_TEXT = "invalid high surrogate in string"


def marker_text(hidden: int) -> str:
    """A truncation marker's content, as the field writes it (contract §4 reference; domain §2.1)."""
    return f"[Sliding window truncation: {hidden} messages hidden to reduce context]"


def notice_text(removed: int) -> str:
    """The notice appended to a cut tool-result text (contract §4 reference; domain §3.7)."""
    return f"\n[Tool result truncated: {removed} characters removed to fit the context budget]"


# -- pairing-violation keys (contract §4.4: violations compared by rule and tool id) -----------------

#: A ``tool_use`` whose id does not lead the next user message (§3 rule 1).
MISSING_RESULT = "missing-result"
#: A ``tool_use`` whose id leads the next user message more than once (§3 rule 1).
DUPLICATE_RESULT = "duplicate-result"
#: A ``tool_result`` whose id is not a ``tool_use`` of the message before (§3 rule 4).
UNEXPECTED_RESULT = "unexpected-result"
#: A non-result block after an unresolved server tool call (domain §5.1; §7 A16).
SERVER_PENDING = "server-pending"


# -- visibility on JSON (contract §2) ---------------------------------------------------------------

#: Why a message is hidden: it precedes the last summary, or a parent tag names an existing
#: summary (``condenseParent``) or marker (``truncationParent``).
BEFORE_SUMMARY = "before-summary"
CONDENSED = "condense"
TRUNCATED = "truncation"


#: The keys by which a stored message decides or takes part in what is hidden (contract §2): a
#: library with no notion of Roo's visibility never holds them (policy ``inputs=untagged``, §7).
VISIBILITY_KEYS = (
    "isSummary", "condenseId", "condenseParent", "isTruncationMarker", "truncationId", "truncationParent",
)


def existing_parents(messages: Sequence[JsonMessageView]) -> tuple[frozenset[str], frozenset[str]]:
    """The summary ids and marker ids present anywhere in the input, hidden or not (contract §2).

    An id is a string, the empty string included: contract §1 allows a string or null there, and a
    null (or a value of any other type, which the stored format refuses) names nothing.
    """
    summaries: set[str] = set()
    markers: set[str] = set()
    for m in messages:
        if m.get("isSummary") is True and isinstance(cid := m.get("condenseId"), str):
            summaries.add(cid)
        if m.get("isTruncationMarker") is True and isinstance(tid := m.get("truncationId"), str):
            markers.add(tid)
    return frozenset(summaries), frozenset(markers)


def last_summary_index(messages: Sequence[JsonMessageView]) -> int:
    """The index of the last ``isSummary`` message, -1 when there is none."""
    return max((i for i, m in enumerate(messages) if m.get("isSummary") is True), default=-1)


def hidden_reasons(messages: Sequence[JsonMessageView]) -> list[str | None]:
    """Per message, ``None`` when the API sees it, else why not (contract §2).

    With a summary present, only the last summary and what follows are candidates, and the last
    summary is always seen, whatever it is tagged with. A candidate is hidden when its
    ``condenseParent`` is a string naming an existing summary, or its ``truncationParent`` a string
    naming an existing marker; a parent that names nothing hides nothing (this is how rewind
    restores).
    """
    summaries, markers = existing_parents(messages)
    last = last_summary_index(messages)
    out: list[str | None] = []
    for i, m in enumerate(messages):
        if i < last:
            out.append(BEFORE_SUMMARY)
        elif i == last:
            out.append(None)
        elif isinstance(parent := m.get("condenseParent"), str) and parent in summaries:
            out.append(CONDENSED)
        elif isinstance(parent := m.get("truncationParent"), str) and parent in markers:
            out.append(TRUNCATED)
        else:
            out.append(None)
    return out


def visible_mask(messages: Sequence[JsonMessageView]) -> list[bool]:
    """``mask[i]`` is whether the API sees ``messages[i]`` (contract §2)."""
    return [why is None for why in hidden_reasons(messages)]


# -- tool ids ---------------------------------------------------------------------------------------


def tool_use_ids(message: JsonMessageView) -> list[str]:
    """The ids of an assistant message's ``tool_use`` blocks, in order, repeats kept (a user message
    holds none: a ``tool_use`` there is a defect, contract §3.8, not a call). Repeats are what
    §3.5 is about, so a reader that looks for them needs them."""
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b["id"] for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def distinct_tool_use_ids(message: JsonMessageView) -> list[str]:
    """:func:`tool_use_ids` without repeats, first occurrence first: the calls the API pairs results
    with (contract §3 rules 1 and 4 read the set)."""
    return list(dict.fromkeys(tool_use_ids(message)))
