"""Properties of ``count`` (contract §5 "Required of a target that offers count").

Agreement is judged against the harness's counter under the tokenizer the target declares, the
system prompt counted by its own call (fudge applied once per call, §4). The contract leaves open
whether ``count`` counts the messages as given (the reference does: it is the counter) or their
effective history (what the API sees, as the harness does when it recounts a recovery); both are
accepted, never a third figure.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from hypothesis.strategies import SearchStrategy

from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Witness, check, declare_op
from ctxmodel.properties.json_reading import short

#: One million characters: the size at which the WASM tiktoken of the field crashes (contract §5).
PATHOLOGICAL_SIZE = 1_000_000
PATHOLOGICAL_KINDS: tuple[str, ...] = ("one-char", "no-whitespace", "multibyte-one-char", "digits")
_NOSPACE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-.:;,"


@cache
def pathological_text(kind: str) -> str:
    """A fixed text per kind (cached: Hypothesis draws the kind, never a million characters)."""
    if kind == "one-char":
        return "a" * PATHOLOGICAL_SIZE
    if kind == "multibyte-one-char":
        return "é" * PATHOLOGICAL_SIZE
    if kind == "digits":
        return "1234567890" * (PATHOLOGICAL_SIZE // 10)
    rng = random.Random(20240611)
    return "".join(rng.choice(_NOSPACE) for _ in range(PATHOLOGICAL_SIZE))


def _counting(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories, texts
    from ctxmodel.strategies.blocks import image_blocks, serialization_inputs

    big = texts(max_size=3000).map(lambda t: [{"role": "user", "content": t}])
    # Top-level images with and without inline data (ceil(sqrt(len(data))) versus 300, §5): drawn
    # as their own choice, so a counter that gets one of the two rules wrong meets it in a few examples
    # rather than only where a history happens to carry a screenshot.
    pictures = st.lists(image_blocks(max_bytes=4096), min_size=1, max_size=3).map(
        lambda images: [{"role": "user", "content": [{"type": "text", "text": "see"}, *images]}]
    )
    # Calls whose inputs hold what JS and Python serialize differently (§5: the input is counted as JS
    # JSON.stringify writes it), likewise their own choice: a history's inputs are mostly plain paths.
    calls = st.lists(serialization_inputs(), min_size=1, max_size=3).map(
        lambda inputs: [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_in{k}", "name": "read_file", "input": x}
                for k, x in enumerate(inputs)
            ]},
        ]
    )
    # Texts past 64K characters (a whole file read back as one result), which a counter may split
    # into chunks at safe places, and runs with no place to cut (a base64 blob, padding, a minified
    # file: domain §4.6), after a little prose: their pieces are long enough that a counter must take
    # another path to stay fast. Small beside count.pathological-answers' 1 MB, which only has to answer.
    runs = st.one_of(
        texts(min_size=66_000, max_size=90_000, kinds=("prose", "code")),
        st.tuples(texts(max_size=200), texts(min_size=66_000, max_size=90_000, kinds=("onechar", "nospace"))).map(
            " ".join
        ),
    ).map(lambda t: [{"role": "user", "content": t}])
    messages = st.one_of(histories(), big, pictures, calls, runs)
    system = st.one_of(st.none(), texts(), texts(max_size=2000))

    def build(m: list[dict[str, Any]], s: str | None) -> dict[str, Any]:
        return {"messages": m} if s is None else {"messages": m, "systemPrompt": s}

    return st.builds(build, messages, system)


def _pathological(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    from hypothesis import strategies as st

    def build(kind: str, where: str) -> dict[str, Any]:
        text = pathological_text(kind)
        if where == "system":
            return {"messages": [{"role": "user", "content": "hi"}], "systemPrompt": text}
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}

    return st.builds(build, st.sampled_from(PATHOLOGICAL_KINDS), st.sampled_from(("message", "system")))


def _tokens(ex: Exchange) -> tuple[int | None, str]:
    result = ex.result
    tokens = result.get("tokens") if isinstance(result, dict) else None
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        return None, f"count returned {short(result)}: expected {{\"tokens\": a non-negative integer}}"
    return tokens, ""


def _histories_and_texts(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """What every op's properties draw for count (purity): any history with a system prompt."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories, texts

    return st.builds(lambda messages, system: {"messages": messages, "systemPrompt": system}, histories(), texts())


#: The broken targets of the ops but recover and normalize (``tests/targets/broken_ops.py``).
_P = "python:tests.targets.broken_ops"

declare_op("count", params=_histories_and_texts, purity_witnesses=(
    Witness(f"{_P}:RemembersToolUses", "answers-differently"),
    Witness(f"{_P}:MutatesInput", "mutates-input"),
))


@check(
    "count.agrees",
    op="count",
    clause="contract §5",
    summary="count equals the harness's count under the tokenizer the target declares (system prompt counted "
    "separately).",
    params=_counting,
    witnesses=(Witness(f"{_P}:CountsPerMessage", ""), Witness(f"{_P}:CountsImagesFlat", "")),
)
def agrees(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    tokens, problem = _tokens(ex)
    expected = f"the harness's count under the declared tokenizer {probe.tokenizer!r} (§5)"
    if tokens is None:
        yield Finding.fail(problem, expected)
        return
    messages, system = ex.params["messages"], ex.params.get("systemPrompt", "")
    harness = probe.count(messages, system)
    if tokens == harness:
        return
    visible = probe.recount(messages, system)
    if tokens == visible:
        return
    yield Finding.fail(
        f"count says {tokens} tokens; the harness counts {harness} for the messages as given "
        f"({visible} for their effective history), system prompt of {len(system)} characters counted separately",
        expected,
    )


@check(
    "count.pathological-answers",
    op="count",
    clause="contract §5",
    summary="count answers (no exception, no hang) on 1 MB of one repeated character or without whitespace.",
    params=_pathological,
    witnesses=(Witness(f"{_P}:CrashesOnLongWords", "target-exception"),),
)
def pathological(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    tokens, problem = _tokens(ex)
    if tokens is None:
        yield Finding.fail(problem, "an answer on every input, 1 MB without whitespace included (§5)")


