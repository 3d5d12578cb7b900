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

    dialect = policies.get("dialect", "anthropic")
    part = "input_text" if dialect == "openai-responses" else "text"

    def build(kind: str, where: str) -> dict[str, Any]:
        text = pathological_text(kind)
        typeless = dialect in ("bedrock-converse", "gemini")
        key = "parts" if dialect == "gemini" else "content"
        hi: Any = [{"text": "hi"}] if typeless else "hi"
        if where == "system" and dialect not in ("anthropic", "bedrock-converse", "gemini"):  # a message there
            return {"messages": [{"role": "system", "content": text}, {"role": "user", "content": hi}]}
        if where == "system":
            return {"messages": [{"role": "user", key: hi}], "systemPrompt": text}
        block = {"text": text} if typeless else {"type": part, "text": text}
        return {"messages": [{"role": "user", key: [block]}]}

    return st.builds(build, st.sampled_from(PATHOLOGICAL_KINDS), st.sampled_from(("message", "system")))


def _tokens(ex: Exchange) -> tuple[int | None, str]:
    result = ex.result
    tokens = result.get("tokens") if isinstance(result, dict) else None
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        return None, f"count returned {short(result)}: expected {{\"tokens\": a non-negative integer}}"
    return tokens, ""


def _histories_and_texts(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """What every op's properties draw for count (purity): any history with a system prompt, or in
    the Chat Completions dialect any such history (its instructions are messages)."""
    from hypothesis import strategies as st

    from ctxmodel.strategies import histories, texts

    if policies.get("dialect") == "openai-chat":
        from ctxmodel.strategies.openai_chat import chat_histories

        return st.builds(lambda messages: {"messages": messages}, chat_histories())
    if policies.get("dialect") == "openai-responses":
        from ctxmodel.strategies.responses import responses_histories

        return st.builds(lambda messages: {"messages": messages}, responses_histories())
    if policies.get("dialect") in ("bedrock-converse", "gemini"):
        from ctxmodel.strategies.trim import trim_histories

        return st.builds(lambda messages, system: {"messages": messages, "systemPrompt": system},
                         trim_histories(str(policies["dialect"])), texts())
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
    "separately; Anthropic dialect).",
    params=_counting,
    witnesses=(Witness(f"{_P}:CountsPerMessage", ""), Witness(f"{_P}:CountsImagesFlat", "")),
    # §5 is the count of Anthropic messages; of a Chat Completions count, §10.7 asks what it can.
    dialects=("anthropic",),
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
    policies=("dialect",),
    witnesses=(Witness(f"{_P}:CrashesOnLongWords", "target-exception"),),
)
def pathological(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    tokens, problem = _tokens(ex)
    if tokens is None:
        yield Finding.fail(problem, "an answer on every input, 1 MB without whitespace included (§5)")


# -- contract §10.7: what every count must do, in every dialect ------------------------------------

#: 64 characters of varied prose: more tokens under every tokenizer a target may declare.
_MORE = "the quick brown fox jumps over the lazy dog, 0123456789 times!"
_LONGER_NAME = "_with_a_longer_name_x"


def _added(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """A history, a message (of another history) and where it goes: ``count`` is asked of the history."""
    from hypothesis import strategies as st

    from ctxmodel.strategies.trim import trim_histories

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        messages = draw(trim_histories(policies.get("dialect", "anthropic")))
        donor = draw(trim_histories(policies.get("dialect", "anthropic")))
        extra = draw(st.sampled_from(donor)) if donor else {"role": "user", "content": "one more"}
        return {"messages": messages, "added": extra, "at": draw(st.integers(0, len(messages)))}

    return build()


def _count_of_history(probe: Probe, params: dict[str, Any]) -> Exchange:
    """The count of the history alone, judged with the drawn message and place beside it."""
    ex = probe.exchange("count", {"messages": params["messages"]})
    return Exchange(ex.op, params, ex.result, ex.mutated)


def _tokens_of(probe: Probe, messages: list[dict[str, Any]]) -> int | None:
    tokens = probe.call("count", {"messages": messages}).get("tokens")
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


@check(
    "count.monotone",
    op="count",
    clause="contract §10.7",
    summary="Adding a message to a history never lowers its count (every dialect).",
    params=_added,
    policies=("dialect",),
    call=_count_of_history,
    witnesses=(Witness("python:tests.targets.broken_trim:CountsTheLastTurn", "count-dropped"),),
)
def monotone(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    before, problem = _tokens(ex)
    if before is None:
        yield Finding.fail(problem, "a count of every history (§5, §10.7)", code="bad-count")
        return
    messages = list(ex.params["messages"])
    at = min(int(ex.params["at"]), len(messages))
    longer = [*messages[:at], ex.params["added"], *messages[at:]]
    after = _tokens_of(probe, longer)
    if after is not None and after < before:
        yield Finding.fail(
            f"count gives {before} tokens for the history and {after} once a message is added at messages.{at} "
            f"({short(ex.params['added'], 80)})",
            "adding a message never lowers the count (§10.7)", code="count-dropped",
        )


def _with_call(policies: Mapping[str, str]) -> SearchStrategy[dict[str, Any]]:
    """A history holding at least one tool call (one is appended, answered, when it holds none)."""

    from ctxmodel.strategies.trim import trim_histories

    dialect = policies.get("dialect", "anthropic")

    def ensure(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if not _calls(messages, dialect):
            messages = [*messages, *_A_CALL[dialect]]
        return {"messages": messages}

    return trim_histories(dialect).map(ensure)


#: One answered call in each dialect, for a history that holds none.
_A_CALL: dict[str, list[dict[str, Any]]] = {
    "openai-chat": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}],
    "openai-responses": [
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"}],
    "anthropic": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}],
    "gemini": [
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "ok"}}}]}],
    "bedrock-converse": [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "read_file", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "ok"}]}}]}],
}


def _calls(messages: list[dict[str, Any]], dialect: str) -> list[tuple[int, int]]:
    """(message, call) positions of every tool call: ``tool_calls`` entries, ``tool_use`` blocks
    (Converse ``toolUse`` ones), or ``function_call`` items (the item itself: call -1)."""
    if dialect == "openai-responses":
        return [(i, -1) for i, m in enumerate(messages) if m.get("type") == "function_call"]
    if dialect == "gemini":
        return [(i, k) for i, m in enumerate(messages) if m.get("role") == "model"
                for k, p in enumerate(m.get("parts") or [])
                if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]
    chat = dialect == "openai-chat"
    out = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        items = message.get("tool_calls") if chat else message.get("content")
        for k, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and ((chat and isinstance(item.get("function"), dict))
                                           or (not chat and item.get("type") == "tool_use")
                                           or (not chat and isinstance(item.get("toolUse"), dict))):
                out.append((i, k))
    return out


def _longer(messages: list[dict[str, Any]], where: tuple[int, int], dialect: str, part: str) -> list[dict[str, Any]]:
    """``messages`` with one call's name, or its arguments, longer (a copy)."""
    import copy
    import json

    out = copy.deepcopy(messages)
    i, k = where
    chat = dialect in ("openai-chat", "openai-responses")  # arguments are a JSON string in both OpenAI dialects
    if dialect == "openai-responses":
        call = out[i]
    elif dialect == "bedrock-converse":
        call = out[i]["content"][k]["toolUse"]
    elif dialect == "gemini":
        call = out[i]["parts"][k]["functionCall"]
    else:
        call = out[i]["tool_calls"][k]["function"] if chat else out[i]["content"][k]
    if part == "name":
        call["name"] = f"{call.get('name')}{_LONGER_NAME}"
        return out
    if chat:
        try:
            arguments = json.loads(call.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = call.get("arguments")
        grown = {**arguments, "note": _MORE} if isinstance(arguments, dict) else {"value": arguments, "note": _MORE}
        call["arguments"] = json.dumps(grown, ensure_ascii=False)
    else:
        key = "args" if dialect == "gemini" else "input"
        given = call.get(key)
        call[key] = {**given, "note": _MORE} if isinstance(given, dict) else {"value": given, "note": _MORE}
    return out


@check(
    "count.sees-tool-calls",
    op="count",
    clause="contract §10.7",
    summary="A tool call's name and its arguments are counted: 64 more characters of arguments, or a longer name, "
    "count more (every dialect).",
    params=_with_call,
    policies=("dialect",),
    witnesses=(
        Witness("python:tests.targets.broken_trim:CountsTextOnly", "arguments-ignored"),
        Witness("python:tests.targets.broken_trim:CountsArgumentsNotNames", "name-ignored"),
        Witness("python:tests.targets.converse_trimmers:CountsTextBlocksOnly", "arguments-ignored"),
        Witness("python:tests.targets.gemini_trimmers:CountsTextPartsOnly", "arguments-ignored"),
    ),
)
def sees_tool_calls(probe: Probe, ex: Exchange) -> Iterator[Finding]:
    before, problem = _tokens(ex)
    if before is None:
        yield Finding.fail(problem, "a count of every history (§5, §10.7)", code="bad-count")
        return
    dialect = probe.policies.get("dialect", "anthropic")
    messages: list[dict[str, Any]] = ex.params["messages"]
    where = _calls(messages, dialect)[-1]
    for part, code in (("arguments", "arguments-ignored"), ("name", "name-ignored")):
        after = _tokens_of(probe, _longer(messages, where, dialect, part))
        if after is not None and after <= before:
            yield Finding.fail(
                f"count gives {before} tokens for the history and {after} once the call at messages.{where[0]} has a "
                f"longer {part}",
                f"a tool call's {part} is counted (§10.7)", code=code,
            )
            return
