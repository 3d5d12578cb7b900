"""Trimmers of Gemini ``contents`` (contract §10, §10.1, §10.8, §10.7): legitimate ones that make
other valid choices than the reference and declare them, and broken ones with one bug each, the
witnesses of the properties that must catch them (declared with the property). Each is a
``python:tests.targets.gemini_trimmers:Class`` target declaring ``gemini``.

They read contents with their own helpers, not ``ctxmodel.trimming``, and count with the reference's
Gemini count, which their ``count`` op answers with (but for the broken counter).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.trimmers import ReferenceSystemApart

Params = dict[str, Any]
Content = dict[str, Any]

_SIGNATURE = "thoughtSignature"


def _is_prompt(content: Content) -> bool:
    return content.get("role") == "user" and not any(
        isinstance(p, dict) and "functionResponse" in p for p in content.get("parts") or [])


def _last_prompt(contents: list[Content]) -> int:
    return max((i for i, c in enumerate(contents) if _is_prompt(c)), default=-1)


def _unsigned(content: Content) -> Content:
    parts = content.get("parts")
    if not isinstance(parts, list):
        return content
    return {**content, "parts": [{k: v for k, v in p.items() if k != _SIGNATURE} if isinstance(p, dict) else p
                                 for p in parts]}


class ReferenceGemini(ReferenceSystemApart):
    """The reference's ``trim`` and ``count`` on Gemini contents, as a worker target."""

    name = "trimmer-reference-gemini"
    dialect: ClassVar[str] = "gemini"


class WindowFromAPrompt(ReferenceGemini):
    """The longest suffix that fits and opens on a user prompt (no ``functionResponse``): a sliding
    window over an agent's events that never starts on responses nor on the model."""

    name = "trimmer-window-from-a-prompt-gemini"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        contents: list[Content] = params["messages"]
        budget = params.get("maxTokens")
        count = self.measure(params)
        if not isinstance(budget, int) or count(contents) <= budget:
            return {"messages": list(contents)}
        for start in range(1, len(contents)):
            if self.opens_at(contents[start]) and count(contents[start:]) <= budget:
                return {"messages": contents[start:]}
        return {"error": f"nothing fits {budget} tokens"}

    def opens_at(self, message: Any) -> bool:
        """Where the window may start: a user prompt."""
        return _is_prompt(message)


class StripsOldReasoning(ReferenceGemini):
    """Thought parts and signatures of earlier turns dropped first, the current turn's kept, then
    the reference's trim: Gemini validates only the current turn's signatures (domain §5.9), declared."""

    name = "trimmer-strips-old-reasoning-gemini"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimReasoning": "strip",
                                          "reasoningRequired": "current-turn"}

    def trim(self, params: Params) -> Params:
        contents: list[Content] = params["messages"]
        budget = params.get("maxTokens")
        if not isinstance(budget, int) or self.measure(params)(contents) <= budget:
            return {"messages": list(contents)}
        last = _last_prompt(contents)
        kept = []
        for n, content in enumerate(contents):
            bare = _unsigned(content)
            bare["parts"] = [p for p in bare.get("parts") or [] if not (isinstance(p, dict) and p.get("thought"))]
            kept.append(bare if n < last and bare["parts"] else content)
        return ref.op_gemini_trim({**params, "messages": kept})


def _keys(content: Content, kind: str) -> list[str]:
    """The id, else the name, of each call or response part (``kind``) of a content."""
    return [str(p[kind].get("id") or p[kind].get("name")) for p in content.get("parts") or []
            if isinstance(p, dict) and isinstance(p.get(kind), dict)]


def _late_to(contents: list[Content], i: int) -> list[int]:
    """The response contents that answer the calls of ``contents[i]`` late: after a user content in
    between, with nothing but user contents between (a model content there is another turn)."""
    calls = set(_keys(contents[i], "functionCall"))
    if not calls or i + 1 == len(contents) or _keys(contents[i + 1], "functionResponse"):
        return []
    late: list[int] = []
    for k in range(i + 1, len(contents)):
        if contents[k].get("role") != "user":
            break
        answers = _keys(contents[k], "functionResponse")
        if answers and set(answers) <= calls:
            late.append(k)
    return late


def _joined(pieces: list[Content]) -> Content:
    """Response contents as one: every response first, then every other part, each in order."""
    parts = [p for c in pieces for p in c["parts"]]
    return {"role": "user", "parts": [p for p in parts if "functionResponse" in p]
            + [p for p in parts if "functionResponse" not in p]}


class RejoinsLateResponses(ReferenceGemini):
    """Each late response content moved to right after its call and joined into one (Google ADK's
    async rearrangement, restricted to a run of user contents), declared ``lateResults=rejoin``; then
    the reference's trim."""

    name = "trimmer-rejoins-late-responses-gemini"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "lateResults": "rejoin"}

    def trim(self, params: Params) -> Params:
        return ref.op_gemini_trim({**params, "messages": self.rejoin(params["messages"])})

    def rejoin(self, contents: list[Content]) -> list[Content]:
        out: list[Content] = []
        taken: set[int] = set()
        for i, content in enumerate(contents):
            if i in taken:
                continue
            late = _late_to(contents, i)
            out.extend(self.place(content, _joined([contents[k] for k in late]) if late else None,
                                  [contents[k] for k in range(i + 1, late[-1]) if k not in late] if late else []))
            taken.update(late)
            if late:
                taken.update(range(i + 1, late[-1]))
        return out

    def place(self, call: Content, joined: Content | None, between: list[Content]) -> list[Content]:
        """The call, its joined responses, and the user contents that stood between them."""
        return [call] + ([joined] if joined else []) + between


class SummarizesWhatItDrops(WindowFromAPrompt):
    """The window from a prompt, with one user content of text where it dropped the oldest (as
    ADK's compaction puts its summary), declared ``trimPlaceholder=one``; without it when only the
    window fits."""

    name = "trimmer-summarizes-what-it-drops-gemini"
    policies: ClassVar[dict[str, str]] = {**WindowFromAPrompt.policies, "trimPlaceholder": "one"}

    def trim(self, params: Params) -> Params:
        contents: list[Content] = params["messages"]
        budget = params.get("maxTokens")
        count = self.measure(params)
        if not isinstance(budget, int) or count(contents) <= budget:
            return {"messages": self.whole(contents)}
        for start in range(1, len(contents)):
            if not self.opens_at(contents[start]):
                continue
            summary = {"role": "user", "parts": [{"text": f"Summary of {start} earlier contents."}]}
            if count([summary, *contents[start:]]) <= budget:
                return {"messages": [summary, *contents[start:]]}
            if count(contents[start:]) <= budget:
                return {"messages": contents[start:]}
        return {"error": f"nothing fits {budget} tokens"}

    def whole(self, contents: list[Content]) -> list[Content]:
        """The answer when everything fits: the contents as they are."""
        return list(contents)


LEGITIMATE: tuple[str, ...] = ("ReferenceGemini", "WindowFromAPrompt", "StripsOldReasoning", "RejoinsLateResponses",
                               "SummarizesWhatItDrops")


# -- broken: one bug each --------------------------------------------------------------------------


class OpensAnywhereGemini(WindowFromAPrompt):
    """The newest contents that fit, from any content: the window may open on a response turn whose
    call turn it cut ("function response turn comes immediately after a function call turn")."""

    name = "trimmer-opens-anywhere-gemini"

    def opens_at(self, message: Any) -> bool:
        return True


class DropsThoughtSignatures(ReferenceGemini):
    """Every ``thoughtSignature`` dropped (a round trip through a type without it), though it declares
    ``trimReasoning=keep``: Gemini 3 refuses the current turn's calls."""

    name = "trimmer-drops-thought-signatures"

    def trim(self, params: Params) -> Params:
        return ref.op_gemini_trim({**params, "messages": [_unsigned(c) for c in params["messages"]]})


class RejoinsThePromptToo(RejoinsLateResponses):
    """The user's words between a call and its late response joined into the response content: the
    prompt now reads as part of the tool's answer, and as a message of the trimmer's own."""

    name = "trimmer-rejoins-the-prompt-too-gemini"

    def place(self, call: Content, joined: Content | None, between: list[Content]) -> list[Content]:
        if joined is None:
            return [call, *between]
        return [call, {**joined, "parts": joined["parts"] + [p for c in between for p in c["parts"]]}]


class RejoinsAheadOfTheCall(RejoinsLateResponses):
    """The joined responses put one place too early: before their call, not after it."""

    name = "trimmer-rejoins-ahead-of-the-call-gemini"

    def place(self, call: Content, joined: Content | None, between: list[Content]) -> list[Content]:
        return ([joined] if joined else []) + [call, *between]


class SummaryWhereNothingWasDropped(SummarizesWhatItDrops):
    """Its summary content put first even when everything fits and nothing was dropped."""

    name = "trimmer-summary-where-nothing-was-dropped-gemini"

    def whole(self, contents: list[Content]) -> list[Content]:
        return [{"role": "user", "parts": [{"text": "Summary of 0 earlier contents."}]}, *contents]


class CountsTextPartsOnly(ReferenceGemini):
    """A count of ``text`` parts alone: a ``functionCall``'s args (a whole file written) count nothing."""

    name = "counter-gemini-text-only"

    def count(self, params: Params) -> Params:
        texts = [{"role": c.get("role"), "parts": [p for p in c.get("parts") or [] if "text" in p]}
                 for c in params["messages"] if isinstance(c, dict)]
        return ref.op_gemini_count({**params, "messages": texts})
