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
_REJOIN_CANDIDATES = 8

#: An input part: the index of its content, and its own index among that content's parts.
_Place = tuple[int, int]

_M = TypeVar("_M", bound=Mapping[str, Any])


def _is_response_part(part: Any) -> bool:
    return isinstance(part, Mapping) and isinstance(_get(part, "functionResponse", "function_response"), Mapping)


def _answers(part: Mapping[str, Any]) -> str:
    fn = _get(part, "functionResponse", "function_response")
    return str(fn.get("id") or fn.get("name"))


def _draw(wanted: Sequence[Any], offered: Sequence[tuple[_Place, Any]], calls: Sequence[str],
          pruned: bool) -> list[_Place] | None:
    """Where each wanted response comes from among those offered: all of them (some gone under
    ``trimToolCalls=pairs``) in their order, or in the order of the calls they answer."""
    keys = [canon(p) for p in wanted]
    if not pruned and sorted(keys) != sorted(canon(p) for _, p in offered):
        return None
    places: list[_Place] = []
    it = iter(offered)
    for key in keys:
        place = next((at for at, p in it if canon(p) == key), None)
        if place is None:
            break
        places.append(place)
    if len(places) == len(keys):
        return places
    at = [calls.index(k) if k in calls else len(calls) for k in (_answers(p) for p in wanted)]
    if at != sorted(at):
        return None
    free = list(offered)
    places = []
    for key in keys:
        n = next((n for n, (_, p) in enumerate(free) if canon(p) == key), None)
        if n is None:
            return None
        places.append(free.pop(n)[0])
    return places


def _take(content: Msg, history: Sequence[Msg], call: int, calls: Sequence[str], taken: Mapping[int, set[int]],
          pruned: bool) -> dict[int, set[int]] | None:
    """The input parts ``content`` is made of, read as responses put back after ``history[call]``
    (contract §10 ``lateResults=rejoin``), or ``None``."""
    parts = _parts(content)
    responses = [p for p in parts if _is_response_part(p)]
    others = [canon(p) for p in parts if not _is_response_part(p)]

    def offered(k: int) -> list[tuple[_Place, Any]]:
        return [((k, n), p) for n, p in enumerate(_parts(history[k]))
                if n not in taken.get(k, ()) and _is_response_part(p) and _answers(p) in calls]

    def rest(k: int) -> list[tuple[_Place, str]]:
        """A piece's other parts: all still there to take, or none."""
        mine = [((k, n), canon(p)) for n, p in enumerate(_parts(history[k])) if not _is_response_part(p)]
        return [] if any(n in taken.get(k, ()) for (_, n), _ in mine) else mine

    offers = {k: found for k in range(call + 1, len(history)) if history[k].get("role") == "user"
              and not set(history[k]) - {"role", "parts"} and (found := offered(k))}
    pieces = list(offers)[:_REJOIN_CANDIDATES]
    rests = {k: rest(k) for k in pieces}
    wholes = {k for k in pieces if all(_answers(p) in calls for p in _parts(history[k]) if _is_response_part(p))}
    for size in range(1, len(pieces) + 1):
        for chosen in combinations(pieces, size):
            drawn = _draw(responses, [o for k in chosen for o in offers[k]], calls, pruned)
            if drawn is None:
                continue
            for with_rest in _subsets_spelling(others, [(k, rests[k]) for k in chosen], wholes):
                order = [*drawn, *with_rest]
                as_given = [order[n] for n in _positions(parts)]
                if [canon(p) for p in parts] != [canon(p) for p in responses] + others and as_given != sorted(as_given):
                    continue
                if all(any(k == at[0] for at in order) for k in chosen):
                    out: dict[int, set[int]] = {}
                    for k, n in order:
                        out.setdefault(k, set()).add(n)
                    return out
    return None


def _positions(parts: Sequence[Any]) -> list[int]:
    """For each part, its index in the list of responses then other parts."""
    responses = [n for n, p in enumerate(parts) if _is_response_part(p)]
    others = [n for n, p in enumerate(parts) if not _is_response_part(p)]
    where = {n: m for m, n in enumerate(responses + others)}
    return [where[n] for n in range(len(parts))]


def _subsets_spelling(others: Sequence[str], rests: Sequence[tuple[int, list[tuple[_Place, str]]]],
                      must: set[int]) -> list[list[_Place]]:
    """The ways to spell ``others`` with the other parts of some pieces, each piece's whole or not
    at all, in the pieces' order; a piece in ``must`` (all of whose responses answer this call)
    gives its own."""
    found: list[list[_Place]] = []

    def go(n: int, at: int, places: list[_Place]) -> None:
        if n == len(rests):
            if at == len(others):
                found.append(places)
            return
        k, mine = rests[n]
        texts = [t for _, t in mine]
        if texts and others[at:at + len(texts)] == texts:
            go(n + 1, at + len(texts), places + [place for place, _ in mine])
        if k not in must or not mine:
            go(n + 1, at, places)

    go(0, 0, [])
    return found


def set_aside_rejoined(
    answer: Sequence[_M], history: Sequence[_M], same_call: Callable[[_M, _M], bool], pruned: bool,
) -> tuple[list[_M], list[_M], list[int]]:
    """The answer and the input with each response content put back after its call set aside
    (contract §10 ``lateResults=rejoin``, Google ADK's
    ``rearrange_events_for_async_function_responses_in_history``): a returned user content of
    responses right after a call content (an input one, or as ``same_call`` relates it) made of
    parts of input contents after that call, its responses answering that call's calls (by id,
    else by name). An input content goes too when all its parts are so placed (its responses but
    those gone under ``trimToolCalls=pairs``). What is left is judged by §10.2 as ever; whether the
    API pairs what was put back is §10.1's to judge on the answer as returned. Returns the answer
    left, the input left, and the answer's indices of what is left."""
    taken: dict[int, set[int]] = {}
    aside: set[int] = set()
    for j in range(1, len(answer)):
        content, before = answer[j], answer[j - 1]
        if content.get("role") != "user" or not _responses(content) or not _calls(before) \
                or set(content) - {"role", "parts"}:
            continue
        for i, call in enumerate(history):
            if not _calls(call) or not (canon(call) == canon(before) or same_call(before, call)):
                continue
            found = _take(content, history, i, _keys(_calls(call)), taken, pruned)
            if found is not None:
                for k, places in found.items():
                    taken.setdefault(k, set()).update(places)
                aside.add(j)
                break
    used = {k for k, places in taken.items()
            if all(n in places or (pruned and _is_response_part(p)) for n, p in enumerate(_parts(history[k])))}
    kept = [j for j in range(len(answer)) if j not in aside]
    return [answer[j] for j in kept], [m for k, m in enumerate(history) if k not in used], kept
