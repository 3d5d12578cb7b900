"""``trim`` requests in the target's declared dialect (contract §10), budgets placed where it matters.

A trimmer's behaviour changes at a few budgets: the history fits untouched; it is a few tokens over,
so the trimmer must first act (and its cheapest fix is the likeliest to break a rule); one turn must go; all
but the last turn must go; only the floor (what the declared policies keep) is left; not even that
fits, so the answer is the controlled error. The budget is drawn at those points (each exactly, and
one token either side, where off-by-one bugs live), anywhere in between, and at every message
boundary: the budget that the newest ``k`` messages (or the oldest) exactly fill, with the floor.
A trimmer that cuts by messages rather than by turns cuts there, and a boundary inside a turn (a
window that starts on a ``tool`` message, parallel results split) is a budget band only a few
tokens wide, which neither the turn points nor a uniform draw reach.

A point is drawn as where it lies, not as a number: ``"_budget": {"at": "newest", "k": 2, "delta":
-1}`` reads "one token less than the newest two messages (with the floor) count", ``{"at": "tokens",
"tokens": 40}`` is 40 tokens. The probe turns it
into ``maxTokens`` just before the call, with the target's own ``count`` (``budget_of``), so that a
target counting far less or far more than the reference (a characters-over-four estimate, a counter
that skips tool calls) still meets each of its own points, not a budget every history fits. A
target with no ``count`` gets the count a target of the default tokenizer makes (``zoo``; in
``openai-chat``, ``openai-responses``, ``bedrock-converse`` and ``gemini`` the reference's count of that
dialect's messages). The points are read from the
messages as they are at the call, so a fixture trimmed of a message keeps its budget's meaning.

Histories: Chat Completions ones from :mod:`ctxmodel.strategies.openai_chat` (reasoning included),
Responses items from :mod:`ctxmodel.strategies.responses` (reasoning items before their items),
Bedrock Converse messages from :mod:`ctxmodel.strategies.converse` and Gemini contents from
:mod:`ctxmodel.strategies.gemini` (the Anthropic ones below, in their blocks or parts, with a system
prompt apart);
Anthropic ones as a request carries them (no hidden messages): mostly what a correct agent stores,
a call in flight allowed, and now and then a history with pairing defects. A share of the stored
ones come from a session with extended thinking on throughout: every assistant message with
``tool_use`` opens with its ``thinking`` (signed) or ``redacted_thinking`` blocks, and now and then an
answer does too (contract §10.8, domain §5.8), so that a trimmer that strips, reorders or edits
reasoning meets it in most runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import event
from hypothesis import strategies as st

from ctxmodel.strategies.text import chance, pick, texts

__all__ = ["BUDGET_KEY", "BUDGET_POINTS", "budget_of", "trim_histories", "trim_requests"]

#: The drawn budget point's key in the params, resolved into ``maxTokens`` before the call.
BUDGET_KEY = "_budget"

Msg = dict[str, Any]

#: Where a budget is placed (see the module): each an ``event`` label of the draw.
BUDGET_POINTS: tuple[str, ...] = (
    "fits", "just-over", "one-turn", "last-turn", "floor", "impossible", "anywhere", "suffix-cut", "prefix-cut",
)


def trim_histories(dialect: str) -> st.SearchStrategy[list[Msg]]:
    """Histories a trimmer is handed in ``dialect``."""
    if dialect == "openai-chat":
        from ctxmodel.strategies.openai_chat import chat_histories

        return chat_histories()
    if dialect == "openai-responses":
        from ctxmodel.strategies.responses import responses_histories

        return responses_histories()
    if dialect == "bedrock-converse":
        from ctxmodel.strategies.converse import converse_histories

        return converse_histories(trim_histories("anthropic"))
    if dialect == "gemini":
        from ctxmodel.strategies.gemini import gemini_histories

        return gemini_histories(trim_histories("anthropic"))
    from ctxmodel.strategies.histories import histories, well_formed_histories

    stored = well_formed_histories(min_turns=1, summaries=False, truncations=False, pending=True)
    defective = histories(min_turns=1, summaries=False, legacy_summaries=False, truncations=False,
                          legacy_markers=False, dangling_parents=False, big_results=True)
    thinking = _thinking_on(stored)
    return st.one_of(stored, thinking, stored, thinking, defective)


def _reasoning_block(draw: st.DrawFn) -> Msg:
    from ctxmodel.strategies.blocks import redacted_thinking_blocks, thinking_blocks

    return draw(redacted_thinking_blocks() if draw(chance(25)) else thinking_blocks())


def _opens_with_reasoning(content: list[Any]) -> bool:
    return bool(content) and isinstance(content[0], dict) and content[0].get("type") in (
        "thinking", "redacted_thinking")


@st.composite
def _thinking_on(draw: st.DrawFn, base: st.SearchStrategy[list[Msg]]) -> list[Msg]:
    """``base``'s history as a session with extended thinking on stores it: each assistant message
    with ``tool_use`` opens with its reasoning (one block, now and then a ``thinking`` and a
    ``redacted_thinking`` one, as the API returns them when part of the reasoning was redacted), and
    an answer now and then."""
    out: list[Msg] = []
    for message in draw(base):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str) and content:
            content = [{"type": "text", "text": content}]  # a reasoning answer is stored as blocks
        if message.get("role") != "assistant" or not isinstance(content, list) or _opens_with_reasoning(content):
            out.append(message)
            continue
        calls = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
        if not draw(chance(90 if calls else 30)):
            out.append(message)
            continue
        blocks = [_reasoning_block(draw)]
        if draw(chance(15)):
            blocks.append(_reasoning_block(draw))
        out.append({**message, "content": [*blocks, *content]})
    return out


#: The dialects whose instructions are messages (no separate system prompt param).
_MESSAGE_SYSTEM = ("openai-chat", "openai-responses")


def _is_message(message: Mapping[str, Any], dialect: str) -> bool:
    return dialect != "openai-responses" or message.get("type", "message") == "message"


def _is_prompt(message: Mapping[str, Any], dialect: str) -> bool:
    if message.get("role") != "user" or not _is_message(message, dialect):
        return False
    content = message.get("parts" if dialect == "gemini" else "content")
    result = (lambda b: "toolResult" in b) if dialect == "bedrock-converse" else (
        lambda b: "functionResponse" in b or "function_response" in b) if dialect == "gemini" else (
        lambda b: b.get("type") == "tool_result")
    return dialect in _MESSAGE_SYSTEM or not (
        isinstance(content, list) and any(isinstance(b, dict) and result(b) for b in content))


def _floor(messages: Sequence[Msg], dialect: str, policies: Mapping[str, str]) -> list[int]:
    chat = dialect in _MESSAGE_SYSTEM
    system = [i for i, m in enumerate(messages)
              if chat and m.get("role") in ("system", "developer") and _is_message(m, dialect)]
    keep = set()
    if policies.get("trimSystem", "keep") == "keep":
        keep |= set(system)
    elif policies.get("trimSystem") == "first" and system[:1] == [0]:
        keep.add(0)
    if policies.get("trimLastUser", "keep") == "keep":
        keep |= set([i for i, m in enumerate(messages) if _is_prompt(m, dialect)][-1:])
    return sorted(keep)


def _estimate(dialect: str, system_prompt: str) -> Any:
    from ctxmodel.tokens import get_counter

    counter = get_counter("zoo")
    if dialect == "openai-chat":
        from ctxmodel.tokens.chat import count_chat

        return lambda messages: count_chat(counter, messages)
    if dialect == "openai-responses":
        from ctxmodel.tokens.responses import count_responses

        return lambda items: count_responses(counter, items)
    if dialect == "bedrock-converse":
        from ctxmodel.tokens.converse import count_converse

        return lambda messages: count_converse(counter, messages, system_prompt)
    if dialect == "gemini":
        from ctxmodel.tokens.gemini import count_gemini

        return lambda contents: count_gemini(counter, contents, system_prompt)
    from ctxmodel import codec

    prompt = counter.count_text(system_prompt)
    return lambda messages: prompt + counter.count_messages(codec.load(messages, copy=False))


def _subset(messages: Sequence[Msg], spec: Mapping[str, Any], dialect: str, policies: Mapping[str, str]) -> list[Msg]:
    """The messages whose count a budget point is placed at, read from the messages as they are."""
    at = spec.get("at")
    floor = set(_floor(messages, dialect, policies))
    starts = [i for i, m in enumerate(messages) if _is_prompt(m, dialect)]
    n = len(messages)
    if at == "all":
        kept: set[int] = set(range(n))
    elif at == "drop-first-turn":
        first_end = starts[1] if len(starts) > 1 else n
        kept = set(range(first_end, n))
    elif at == "last-turn" and policies.get("trimKeep") == "oldest":
        kept = set(range(next((i for i in starts if i > 0), n)))  # the turn such a trimmer keeps (§10.9)
    elif at == "last-turn":
        kept = set(range(starts[-1] if starts else 0, n))
    elif at == "floor":
        kept = set()
    elif at in ("newest", "oldest"):
        k = min(max(1, int(spec.get("k", 1))), max(1, n - 1))
        kept = set(range(n - k, n)) if at == "newest" else set(range(min(k, n)))
    else:
        raise ValueError(f"unknown budget point {at!r}")
    return [m for i, m in enumerate(messages) if i in kept or i in floor]


def budget_of(
    params: Mapping[str, Any], policies: Mapping[str, str], count: Callable[[list[Msg]], int] | None = None
) -> int:
    """The ``maxTokens`` of a drawn budget point (``params[BUDGET_KEY]``), by ``count`` (the target's
    own; the default tokenizer's estimate when None). Never negative."""
    spec = params[BUDGET_KEY]
    dialect = policies.get("dialect", "anthropic")
    messages = params["messages"]
    if count is None:
        count = _estimate(dialect, str(params.get("systemPrompt", "")))
    if spec.get("at") == "tokens":
        return max(0, int(spec.get("tokens", 0)))
    subset = _subset(messages, spec, dialect, policies)
    tokens = count(subset) if subset or dialect not in _MESSAGE_SYSTEM else 0
    return max(0, tokens + int(spec.get("delta", 0)))


@st.composite
def _request(draw: st.DrawFn, dialect: str, policies: Mapping[str, str]) -> dict[str, Any]:
    messages = draw(trim_histories(dialect))
    params: dict[str, Any] = {"messages": messages}
    if dialect not in _MESSAGE_SYSTEM and draw(chance(50)):
        params["systemPrompt"] = draw(texts(nonblank=True, max_size=300))
    if policies.get("trimBudget", "tokens") == "none":
        return params
    point = draw(pick(BUDGET_POINTS))
    event(f"trim budget: {point}")
    near = draw(pick((0, 0, -1, 1)))
    spec: dict[str, Any]
    if point in ("suffix-cut", "prefix-cut") and len(messages) > 1:
        k = draw(st.integers(1, len(messages) - 1))
        spec = {"at": "newest" if point == "suffix-cut" else "oldest", "k": k, "delta": near}
    elif point in ("suffix-cut", "prefix-cut", "anywhere"):
        # A number of tokens, drawn below the whole's estimate: a fixture trimmed of a message keeps
        # it (a share of the whole would move with every drop, and no smaller case would fail).
        whole = _estimate(dialect, str(params.get("systemPrompt", "")))(messages)
        spec = {"at": "tokens", "tokens": draw(st.integers(0, max(0, whole)))}
    elif point == "impossible":
        spec = {"at": "floor", "delta": -1 - draw(st.integers(0, 50))}
    elif point == "fits":
        spec = {"at": "all", "delta": near + draw(st.integers(0, 200))}
    elif point == "just-over":
        # A few tokens under the whole's count: where a trimmer first has to act, and the cheapest fix
        # it finds (one reasoning item stripped, one old result dropped) is the likeliest to break a rule.
        spec = {"at": "all", "delta": -1 - draw(st.integers(0, 24))}
    else:
        spec = {"at": {"one-turn": "drop-first-turn", "last-turn": "last-turn", "floor": "floor"}[point],
                "delta": near}
    params[BUDGET_KEY] = spec
    return params


def trim_requests(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """``trim`` params in the dialect the policies carry (contract §7 ``dialect``, §10)."""
    return _request(policies.get("dialect", "anthropic"), policies)
