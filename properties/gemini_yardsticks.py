"""The yardsticks of ``trim`` on Gemini ``contents`` (contract §10.1, §10.8), restated from the contract.

Read from domain §5.9's rules and the contract's words, not from the dialect module that judges
files (``ctxmodel.dialects.gemini``) nor from the reference trimmer (``ctxmodel.trimming``): a judge
that shared their reading would be blind to their bugs.

Gemini pairs by count and place, not by id: a model content with N ``functionCall`` parts is
answered by the next content, a user one with N ``functionResponse`` parts; a call turn comes right
after a user content, a response turn right after a call turn; and where the history holds a
``thoughtSignature`` anywhere (a signing model wrote it), the first call part of each model content
of the current turn (after the last user content that is not only responses) carries one. A
violation is keyed by its rule and each call it names (its id, else its name), so an answer
is compared with its input by what the API would refuse. Both spellings are read (``functionCall``,
``function_call``). Reasoning (§10.8) is a content's ``thought`` parts and its parts' signatures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "GEMINI",
    "gemini_less_reasoning",
    "gemini_pairing_violations",
    "gemini_reasoning",
    "holds_responses",
    "signatures_went_with_their_calls",
]

Msg = Mapping[str, Any]

#: The Gemini dialect's name (contract §7 ``dialect``).
GEMINI = "gemini"

_SIGNATURE = ("thoughtSignature", "thought_signature")


def _get(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    return part[camel] if camel in part else part.get(snake)


def _parts(content: Msg) -> list[Mapping[str, Any]]:
    parts = content.get("parts")
    return [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []


def _fns(content: Msg, camel: str, snake: str) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(part, the call or response inside it) for each such part."""
    return [(p, fn) for p in _parts(content) if isinstance(fn := _get(p, camel, snake), Mapping)]


def _keys(fns: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[str]:
    """One key per call or response (its id, else its name): a turn's violation is counted once per
    call it names, so an answer that dropped one call of a turn the input already broke the rule
    with is compared call by call, not read as a turn the input did not have."""
    return [str(fn.get("id") or fn.get("name")) for _, fn in fns]


def _calls(content: Msg) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    return _fns(content, "functionCall", "function_call") if content.get("role") == "model" else []


def _responses(content: Msg) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    return _fns(content, "functionResponse", "function_response") if content.get("role") == "user" else []


def holds_responses(content: Msg) -> bool:
    """A user content holding a ``functionResponse``: it continues its call's turn."""
    return bool(_fns(content, "functionResponse", "function_response"))


def _signed(contents: Sequence[Msg]) -> bool:
    return any(isinstance(_get(p, *_SIGNATURE), str) for c in contents for p in _parts(c))


def gemini_pairing_violations(contents: Sequence[Msg]) -> Counter[tuple[str, str]]:
    """Domain §5.9's rules read off one request, by rule and the calls named. A last content's calls
    are pending, not missing."""
    out: Counter[tuple[str, str]] = Counter()
    for k, content in enumerate(contents):
        calls, responses = _calls(content), _responses(content)
        previous = contents[k - 1] if k else None
        if calls and (previous is None or previous.get("role") != "user"):
            out.update(("call-turn-position", key) for key in _keys(calls))
        if calls and k + 1 < len(contents) and len(_responses(contents[k + 1])) != len(calls):
            out.update(("function-response-count", key) for key in _keys(calls))
        if responses and (previous is None or not _calls(previous)):
            out.update(("response-turn-position", key) for key in _keys(responses))
    if _signed(contents):
        start = next((n + 1 for n in range(len(contents) - 1, -1, -1) if contents[n].get("role") == "user"
                      and any(not isinstance(_get(p, "functionResponse", "function_response"), Mapping)
                              for p in _parts(contents[n]))), 0)
        for content in contents[start:]:
            calls = _calls(content)
            if calls and not isinstance(_get(calls[0][0], *_SIGNATURE), str):
                out[("missing-thought-signature", _keys(calls[:1])[0])] += 1
    return out


def gemini_reasoning(content: Msg) -> list[Any]:
    """A content's reasoning: its ``thought`` parts and each part's signature with the part it is on
    (less the signature), in order."""
    out: list[Any] = []
    for part in _parts(content):
        if part.get("thought") is True:
            out.append(dict(part))
        elif isinstance(_get(part, *_SIGNATURE), str):
            out.append({"signature": _get(part, *_SIGNATURE),
                        "on": {k: v for k, v in part.items() if k not in _SIGNATURE}})
    return out


def signatures_went_with_their_calls(content: Msg, original: Msg) -> bool:
    """``content`` carries ``original``'s reasoning less the signatures of the ``functionCall`` parts
    it no longer has: a signature is on its call part, and goes where that part goes."""
    kept = [{k: v for k, v in p.items() if k not in _SIGNATURE} for p in _parts(content)]
    expected = [r for r in gemini_reasoning(original) if "on" not in r or r["on"] in kept
                or not isinstance(_get(r["on"], "functionCall", "function_call"), Mapping)]
    return gemini_reasoning(content) == expected


def gemini_less_reasoning(content: Msg) -> dict[str, Any]:
    """The content with its reasoning set aside: no ``thought`` part, no signature on any part."""
    parts = [{k: v for k, v in p.items() if k not in _SIGNATURE} for p in _parts(content)
             if p.get("thought") is not True]
    return {**content, "parts": parts}
