"""The contract's yardsticks, on JSON and independent of the reference (contract §2, §4).

A judge that decided with ``ctxmodel.visibility`` or ``ctxmodel.recover`` would be blind to the
reference's own bugs (mutation testing showed it), so what the properties measure with is gathered
here. The budget formula, the controlled-error prefix and the visibility predicate on JSON are the
contract's data (``ctxmodel.contract_data``): the reference shares the formula and the prefix (the
tests pin their values by hand), but not the predicate (``ctxmodel.visibility`` keeps its own on the
model, and a test holds the two to agree). The pairing violations are counted by the judges' own
reading (``json_reading``), keyed by the contract's violation names. The one
property that asks the reference by design (``recover.gives-up-where-possible``) says so where it
does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxmodel.contract_data import DEFAULT_RESERVE, FAILED_PREFIX, VISIBILITY_KEYS, allowed_tokens, visible_mask
from ctxmodel.json_types import JsonMessageView
from ctxmodel.properties.json_reading import pairing_violations

__all__ = [
    "DEFAULT_RESERVE",
    "FAILED_PREFIX",
    "allowed_tokens",
    "effective",
    "merged_users",
    "pairing_violations",
    "split_joined_users",
    "visible_indices",
    "visible_mask",
]


def visible_indices(history: Sequence[JsonMessageView]) -> list[int]:
    return [i for i, keep in enumerate(visible_mask(history)) if keep]


def effective(history: Sequence[JsonMessageView]) -> list[Any]:
    """The visible messages, in order, the objects themselves (contract §2: it edits no content)."""
    return [history[i] for i in visible_indices(history)]


def _joinable(message: object) -> bool:
    return (isinstance(message, dict) and message.get("role") == "user"
            and isinstance(message.get("content"), (str, list)) and not any(k in message for k in VISIBILITY_KEYS))


def _blocks(message: JsonMessageView) -> list[Any]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def merged_users(history: Sequence[Any]) -> list[Any]:
    """The history a target declaring ``mergeUsers=yes`` is judged against (contract §3 policies):
    each run of consecutive user messages joined into its first, their blocks in order (string
    content as one text block), the first's other keys kept. A message that takes part in what is
    hidden (a summary, a marker, a tagged message) joins nothing: merging it would change what is
    sent, which ``normalize.keeps-hidden`` judges."""
    out: list[Any] = []
    for message in history:
        if out and _joinable(out[-1]) and _joinable(message):
            out[-1] = {**out[-1], "content": _blocks(out[-1]) + _blocks(message)}
        else:
            out.append(message)
    return out


def _pieces(blocks: list[Any], users: list[tuple[int, Any]], placeholder: bool) -> list[Any] | None:
    """``blocks`` as input user messages taken in the input's order, at most one text block among
    them standing as a placeholder; None when they are not. Memoized by position, so a long run of
    equal messages (a shrunk history's) costs a product of lengths, never a search of subsets."""
    memo: dict[tuple[int, int, bool], list[Any] | None] = {}

    def split(at: int, after: int, spare: bool) -> list[Any] | None:
        if at == len(blocks):
            return []
        key = (at, after, spare)
        if key in memo:
            return memo[key]
        found: list[Any] | None = None
        for index, message in users:
            if index <= after:
                continue
            own = _blocks(message)
            if own and blocks[at:at + len(own)] == own:
                rest = split(at + len(own), index, spare)
                if rest is not None:
                    found = [message, *rest]
                    break
        first = blocks[at]
        if found is None and spare and isinstance(first, dict) and first.get("type") == "text" \
                and set(first) == {"type", "text"}:
            rest = split(at + 1, after, False)
            if rest is not None:
                found = [{"role": "user", "content": [first]}, *rest]
        memo[key] = found
        return found

    return split(0, -1, placeholder)


def split_joined_users(answer: Sequence[Any], history: Sequence[Any], placeholder: bool) -> list[Any]:
    """The answer a trimmer declaring ``mergeUsers=yes`` is judged on (contract §10 policies): each
    returned user message that is no message of the input but the join of input user messages (their
    blocks in the input's order, a string content read as one text block, and under
    ``trimPlaceholder=one`` one text block of the trimmer's own among them) split back into those
    messages. A join it cannot read so stays whole, and is judged as the message it is."""
    users = [(i, m) for i, m in enumerate(history) if _joinable(m)]
    out: list[Any] = []
    for message in answer:
        pieces = None
        if _joinable(message) and message not in history:
            pieces = _pieces(_blocks(message), users, placeholder)
        out.extend(pieces if pieces and len(pieces) > 1 else [message])
    return out
