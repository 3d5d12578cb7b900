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
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any, TypeVar

from ctxmodel.properties.json_reading import canon

__all__ = [
    "GEMINI",
    "gemini_less_reasoning",
    "gemini_pairing_violations",
    "gemini_reasoning",
    "holds_responses",
    "set_aside_rejoined",
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


#: How many later response contents a rejoined content is read against: the subsets of more are not
#: searched (a drawn history holds a handful; a real one that holds more is judged as it stands).
_REJOIN_CANDIDATES = 10


def _is_response_part(part: Any) -> bool:
    return isinstance(part, Mapping) and isinstance(_get(part, "functionResponse", "function_response"), Mapping)


def _in_order(short: Sequence[Any], long: Sequence[Any]) -> bool:
    it = iter(canon(x) for x in long)
    return all(any(canon(x) == y for y in it) for x in short)


def _rejoins(content: Msg, pieces: Sequence[Msg], pruned: bool) -> bool:
    """Whether ``content`` is ``pieces`` joined (contract §10 ``lateResults=rejoin``): their other
    parts all there, in order; their responses, in order (some gone under ``trimToolCalls=pairs``);
    the responses first, or every part in the pieces' own order."""
    parts = _parts(content)
    if set(content) - {"role", "parts"} or any(set(p) - {"role", "parts"} for p in pieces):
        return False
    whole = [p for piece in pieces for p in _parts(piece)]
    responses = [p for p in parts if _is_response_part(p)]
    others = [p for p in parts if not _is_response_part(p)]
    given = [p for p in whole if _is_response_part(p)]
    if not responses or [canon(p) for p in others] != [canon(p) for p in whole if not _is_response_part(p)]:
        return False
    if not (_in_order(responses, given) if pruned else [canon(p) for p in responses] == [canon(p) for p in given]):
        return False
    return [canon(p) for p in parts] == [canon(p) for p in responses + others] or _in_order(parts, whole)


_M = TypeVar("_M", bound=Mapping[str, Any])


def set_aside_rejoined(
    answer: Sequence[_M], history: Sequence[_M], same_call: Callable[[_M, _M], bool], pruned: bool,
) -> tuple[list[_M], list[_M], list[int]]:
    """The answer and the input with each rejoined late response set aside (contract §10
    ``lateResults=rejoin``, Google ADK's ``rearrange_events_for_async_function_responses_in_history``):
    a returned user content of responses right after a call content (an input one, or as
    ``same_call`` relates it) that is the join of input response contents after that call, every
    response of which answers one of its calls (by id, else by name). Those input contents go with
    it. What is left is judged by §10.2 as ever; where the rejoined content sits is what the
    policy allows, and whether the API pairs it is §10.1's to judge on the answer as returned.
    Returns the answer left, the input left, and the answer's indices of what is left."""
    used: set[int] = set()
    aside: set[int] = set()
    for j in range(1, len(answer)):
        content, before = answer[j], answer[j - 1]
        if content.get("role") != "user" or not _responses(content) or not _calls(before):
            continue
        for i, call in enumerate(history):
            if not _calls(call) or not (canon(call) == canon(before) or same_call(before, call)):
                continue
            keys = set(_keys(_calls(call)))
            later = [k for k in range(i + 1, len(history)) if k not in used and _responses(history[k])
                     and set(_keys(_responses(history[k]))) <= keys][:_REJOIN_CANDIDATES]
            found = next((chosen for size in range(1, len(later) + 1) for chosen in combinations(later, size)
                          if _rejoins(content, [history[k] for k in chosen], pruned)), None)
            if found is not None:
                used.update(found)
                aside.add(j)
                break
    kept = [j for j in range(len(answer)) if j not in aside]
    return [answer[j] for j in kept], [m for k, m in enumerate(history) if k not in used], kept
