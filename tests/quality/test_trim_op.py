"""The ``trim`` op (contract §10): the reference in every dialect and the legitimate trimmers pass every
``trim`` property and every §10.7 ``count`` property at ``--profile ci``; the dialect is declared at
the handshake; the yardsticks read Chat Completions pairing as domain §5.5 states it. (The broken
trimmers are each caught with their code by ``tests/test_witnesses.py``, which runs every declared
witness.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxmodel import engine
from ctxmodel.engine import RunConfig
from ctxmodel.errors import UsageError
from ctxmodel.policies import resolve
from ctxmodel.profiles import get_profile
from ctxmodel.properties.chat_yardsticks import chat_pairing_violations, is_partial_of, match_in_order
from ctxmodel.properties.converse_yardsticks import converse_pairing_violations
from ctxmodel.properties.gemini_yardsticks import gemini_pairing_violations
from ctxmodel.properties.registry import all_properties, select
from ctxmodel.targets import TargetFailure, open_target, parse_spec
from ctxmodel.targets.handshake import parse_description
from tests.targets.converse_trimmers import LEGITIMATE as LEGITIMATE_CONVERSE
from tests.targets.gemini_trimmers import LEGITIMATE as LEGITIMATE_GEMINI
from tests.targets.responses_trimmers import LEGITIMATE as LEGITIMATE_RESPONSES
from tests.targets.trimmers import LEGITIMATE

#: The §10 properties: every trim property and the count properties of §10.7.
TRIM_PROPERTIES = [p for p in all_properties() if p.op == "trim" or p.clause == "contract §10.7"]


#: The properties of the op itself: what the legitimate trimmers are held to (their ``count`` is the
#: reference's, judged by the reference's runs).
TRIM_OP_PROPERTIES = [p for p in TRIM_PROPERTIES if p.op == "trim"]


def _run(spec: str, tmp_path: Path, props: list[Any] = TRIM_PROPERTIES,
         max_examples: int | None = None) -> dict[str, str]:
    target = open_target(spec)
    try:
        config = RunConfig(profile=get_profile("ci"), policies=resolve(target.description.policies),
                           fixtures_dir=tmp_path, seed=0, database=None, target_spec=spec,
                           max_examples=max_examples)
        report = engine.run(props, config, target=target)
    finally:
        target.close()
    return {o.prop.id: o.status + "".join(f" {k.key}" for k in o.kinds) for o in report.outcomes}


def test_the_trim_properties_cover_every_clause_of_section_10() -> None:
    clauses = {p.clause for p in TRIM_PROPERTIES}
    assert clauses >= {f"contract §10.{n}" for n in range(1, 11)}
    assert "purity.trim" in {p.id for p in TRIM_PROPERTIES}
    assert {p.id for p in select(ops=["trim"])} >= {"trim.accepted", "trim.keeps-order", "trim.fits",
                                                    "trim.system-as-declared", "trim.last-user-as-declared",
                                                    "trim.idempotent", "purity.trim"}


@pytest.mark.parametrize("spec", ["reference", "reference:openai-chat", "reference:openai-responses",
                                  "reference:bedrock-converse", "reference:gemini"])
def test_the_reference_passes_every_trim_property(spec: str, tmp_path: Path) -> None:
    statuses = _run(spec, tmp_path)
    assert statuses == {p.id: "passed" for p in TRIM_PROPERTIES}


#: Two legitimate trimmers (one per dialect) in the default tier, the rest in the slow tier: each is a
#: worker process judged on every trim property, 10-20 s on a busy machine.
_DEFAULT_TIER = ("SuffixCut", "PrunerChat")


@pytest.mark.parametrize("name", [n if n in _DEFAULT_TIER else pytest.param(n, marks=pytest.mark.slow)
                                  for n in LEGITIMATE])
def test_a_legitimate_trimmer_passes(name: str, tmp_path: Path) -> None:
    """Fewer examples than ci's 60 (ten worker targets): each trimmer's own choices, under the budgets
    of every point, still meet the shapes that tell them apart from the reference."""
    statuses = _run(f"python:tests.targets.trimmers:{name}", tmp_path, TRIM_OP_PROPERTIES, max_examples=20)
    assert statuses == {p.id: "passed" for p in TRIM_OP_PROPERTIES}


#: The legitimate trimmers of the other dialects, each module's reference left out (the reference
#: runs above): in Responses a sliding window from safe starts, in Converse and Gemini a window that
#: opens on a prompt, and in each one stripping old turns' reasoning where it may.
_OTHER_DIALECTS = [(module, name) for module, names in (("responses_trimmers", LEGITIMATE_RESPONSES),
                                                        ("converse_trimmers", LEGITIMATE_CONVERSE),
                                                        ("gemini_trimmers", LEGITIMATE_GEMINI))
                   for name in names[1:]]


@pytest.mark.parametrize(("module", "name"), _OTHER_DIALECTS)
def test_a_legitimate_trimmer_of_another_dialect_passes(module: str, name: str, tmp_path: Path) -> None:
    statuses = _run(f"python:tests.targets.{module}:{name}", tmp_path, TRIM_OP_PROPERTIES, max_examples=30)
    assert statuses == {p.id: "passed" for p in TRIM_OP_PROPERTIES}


def test_the_reference_declares_its_dialect() -> None:
    assert open_target("reference").description.dialect == "anthropic"
    chat = open_target("reference:openai-chat").description
    assert chat.dialect == "openai-chat" and chat.ops == {"describe", "trim", "count"}
    assert str(parse_spec("reference:openai-chat")) == "reference:openai-chat"
    assert str(parse_spec("reference:anthropic")) == "reference"
    with pytest.raises(UsageError, match="reference:DIALECT"):
        parse_spec("reference:openai")


GOOD: dict[str, Any] = {"protocol": 1, "name": "t", "version": "1", "ops": ["describe", "trim", "count"]}


def test_the_handshake_reads_and_checks_the_dialect() -> None:
    assert parse_description(GOOD, "f").dialect == "anthropic"
    assert "dialect" not in parse_description(GOOD, "f").policies
    assert parse_description({**GOOD, "dialect": "openai-chat"}, "f").policies["dialect"] == "openai-chat"
    with pytest.raises(TargetFailure, match=r"dialect 'openai': unknown dialect \(did you mean 'openai-chat'\?\)"):
        parse_description({**GOOD, "dialect": "openai"}, "f")
    with pytest.raises(TargetFailure, match="ops normalize are defined on Anthropic messages only"):
        parse_description({**GOOD, "dialect": "openai-chat", "ops": ["trim", "normalize"]}, "f")
    with pytest.raises(TargetFailure, match="not among the policies"):
        parse_description({**GOOD, "policies": {"dialect": "openai-chat"}}, "f")
    with pytest.raises(TargetFailure, match="trimSystem=kept: unknown value"):
        parse_description({**GOOD, "policies": {"trimSystem": "kept"}}, "f")


def test_a_target_that_lists_no_ops_is_not_taken_to_offer_trim() -> None:
    ops = parse_description({"protocol": 1}, "f").ops
    assert "trim" not in ops and "count" in ops


def _call(tool_id: str) -> dict[str, Any]:
    return {"id": tool_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_chat_pairing_is_read_as_domain_5_5_states_it() -> None:
    user = {"role": "user", "content": "go"}
    calls = {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b")]}

    def tool(tool_id: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": tool_id, "content": "ok"}

    assert chat_pairing_violations([user, calls, tool("b"), tool("a")]) == {}
    assert chat_pairing_violations([user, calls, tool("a")]) == {("unanswered-tool-call", "b"): 1}
    assert chat_pairing_violations([user, tool("a")]) == {("tool-without-call", "a"): 1}
    assert chat_pairing_violations([user, calls, tool("a"), tool("a"), tool("b"), tool("c")]) == {
        ("duplicate-tool-message", "a"): 1, ("tool-call-id-not-found", "c"): 1}
    assert chat_pairing_violations([calls, user, tool("a"), tool("b")]) == {
        ("unanswered-tool-call", "a"): 1, ("unanswered-tool-call", "b"): 1,
        ("tool-without-call", "a"): 1, ("tool-without-call", "b"): 1}
    assert chat_pairing_violations([user, {"role": "assistant", "tool_calls": []}]) == {("empty-tool-calls", ""): 1}


def test_order_and_partials_are_read_as_section_10_states_them() -> None:
    a, b, c = ({"role": "user", "content": f"message {n} " * 5} for n in range(3))
    assert match_in_order([a, c], [a, b, c], partial=False) == ([0, 2], -1, "")
    assert match_in_order([c, a], [a, b, c], partial=False)[2] == "moved"
    assert match_in_order([a, a], [a, b, c], partial=False)[2] == "duplicated"
    assert match_in_order([{"role": "user", "content": "new"}], [a, b, c], partial=False)[2] == "invented"
    cut = {"role": "user", "content": "message 1 message 1"}
    assert match_in_order([cut], [a, b, c], partial=False)[2] == "cut-undeclared"
    assert match_in_order([cut], [a, b, c], partial=True) == ([1], -1, "")
    parts = {"role": "user", "content": [{"type": "text", "text": "one two"}, {"type": "text", "text": "three"}]}
    assert is_partial_of({"role": "user", "content": [{"type": "text", "text": "two"}]}, parts)
    assert not is_partial_of({"role": "user", "content": [{"type": "text", "text": "three"},
                                                          {"type": "text", "text": "one"}]}, parts)
    assert not is_partial_of({"role": "assistant", "content": "message 1"}, b)


def _use(tool_id: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tool_id, "name": "f", "input": {}}}


def _result(tool_id: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_id, "content": [{"text": "ok"}]}}


def test_converse_pairing_is_read_as_domain_5_10_states_it() -> None:
    user = {"role": "user", "content": [{"text": "go"}]}
    calls = {"role": "assistant", "content": [{"text": "on it"}, _use("a"), _use("b")]}
    results = {"role": "user", "content": [_result("b"), _result("a")]}
    assert converse_pairing_violations([user, calls, results]) == {}
    assert converse_pairing_violations([user, calls]) == {}  # pending at the end
    assert converse_pairing_violations([user, calls, {"role": "user", "content": [_result("a")]}]) == {
        ("missing-tool-result", "b"): 1}
    assert converse_pairing_violations([results, calls]) == {("excess-tool-results", "b"): 1,
                                                             ("excess-tool-results", "a"): 1}
    assert converse_pairing_violations([calls, results]) == {("first-message-user", ""): 1}
    split = [user, calls, {"role": "user", "content": [_result("a")]}, {"role": "user", "content": [_result("b")]}]
    assert converse_pairing_violations(split) == {("missing-tool-result", "b"): 1, ("roles-alternate", ""): 1,
                                                  ("excess-tool-results", "b"): 1}
    twice = {"role": "user", "content": [_result("a"), _result("a"), _result("b")]}
    assert converse_pairing_violations([user, calls, twice]) == {("duplicate-tool-result", "a"): 1}


def _gemini_call(name: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": {}}}
    return {**part, "thoughtSignature": signature} if signature else part


def _gemini_response(name: str) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"output": "ok"}}}


def test_gemini_pairing_is_read_as_domain_5_9_states_it() -> None:
    user = {"role": "user", "parts": [{"text": "go"}]}
    calls = {"role": "model", "parts": [_gemini_call("a"), _gemini_call("b")]}
    answers = {"role": "user", "parts": [_gemini_response("a"), _gemini_response("b")]}
    assert gemini_pairing_violations([user, calls, answers]) == {}
    assert gemini_pairing_violations([user, calls]) == {}  # pending at the end
    assert gemini_pairing_violations([user, calls, {"role": "user", "parts": [_gemini_response("a")]}]) == {
        ("function-response-count", "a"): 1, ("function-response-count", "b"): 1}
    assert gemini_pairing_violations([answers, user]) == {("response-turn-position", "a"): 1,
                                                          ("response-turn-position", "b"): 1}
    assert gemini_pairing_violations([calls, answers]) == {("call-turn-position", "a"): 1,
                                                           ("call-turn-position", "b"): 1}
    signed = {"role": "model", "parts": [_gemini_call("c", "c2ln")]}
    again = {"role": "model", "parts": [_gemini_call("d")]}
    late = [user, signed, {"role": "user", "parts": [_gemini_response("c")]}, again]
    assert gemini_pairing_violations(late) == {("missing-thought-signature", "d"): 1}
    # an unsigned history (Gemini 2.x) is never held to the signature rule
    assert gemini_pairing_violations([user, again]) == {}
