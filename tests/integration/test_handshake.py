"""The ``describe`` handshake (contract §7, §9): declarations checked before any property runs,
each refusal one line naming what is accepted; tokenizer names by the contract's vocabulary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmodel.errors import UsageError
from ctxmodel.policies import check_policy, resolve
from ctxmodel.targets import OPS, TargetFailure, open_target
from ctxmodel.targets.handshake import parse_description

ROOT = Path(__file__).resolve().parents[2]
GOOD: dict[str, Any] = {"protocol": 1, "name": "t", "version": "1", "ops": ["describe", "normalize"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"protocol": None}, "describe: protocol: expected the number 1, got None"),
        ({"protocol": True}, "describe: protocol: expected the number 1, got True"),
        ({"protocol": 2}, "describe: protocol 2: not supported; expected 1"),
        (
            {"ops": ["describe", "normalise"]},
            "describe: ops: unknown op 'normalise' (did you mean 'normalize'?); "
            "expected some of describe, normalize, effective, request, recover, count",
        ),
        ({"ops": "normalize"}, "describe: ops: expected an array of op names"),
        ({"name": 7}, "describe: name: expected a string, got 7"),
        (
            {"tokenizer": "o200k-base"},
            "describe: tokenizer 'o200k-base': unknown tokenizer (did you mean 'o200k_base'?); "
            "expected o200k_base or cl100k_base (fudge 1.5)",
        ),
        (
            {"tokenizer": {"encoding": "o200k_base", "fudge": "x"}},
            "describe: tokenizer: fudge: expected a positive number",
        ),
        ({"tokenizer": 3}, "describe: tokenizer: expected an encoding name"),
        (
            {"policies": {"orphan": "to_text"}},
            "describe: policies: unknown policy 'orphan' (did you mean 'orphans'?); "
            "expected one of orphans, trailing, resultOrder, recoverSuccess",
        ),
        (
            {"policies": {"orphans": "totext"}},
            "describe: policies: orphans=totext: unknown value (did you mean "
            "'to_text'?); expected one of drop|to_text|any|relabel",
        ),
        ({"policies": {"resultOrder": "ToolUse"}}, "(did you mean 'tool_use'?)"),
        ({"policies": {"trailing": 1}}, "describe: policies: trailing: expected a string"),
        ({"policies": ["orphans"]}, "describe: policies: expected an object of policies, got list"),
    ],
)
def test_describe_refusals_are_one_line_with_what_is_accepted(change: dict[str, Any], message: str) -> None:
    with pytest.raises(TargetFailure) as caught:
        parse_description({**GOOD, **change}, "fallback")
    assert caught.value.kind == "protocol"
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_missing_protocol_is_refused_and_defaults_fill_the_rest() -> None:
    with pytest.raises(TargetFailure, match='describe: protocol: missing; expected "protocol": 1'):
        parse_description({"name": "t"}, "fallback")
    described = parse_description({"protocol": 1.0}, "fallback")  # numbers by value (§1)
    assert (described.name, described.version, described.tokenizer, described.policies) == ("fallback", "", "zoo", {})
    assert described.ops == set(OPS) - {"trim"}  # trim is offered only when listed (contract §7)


def test_tokenizers_are_stored_by_their_canonical_name() -> None:
    for declared, name in (
        ("o200k_base", "o200k_base"),
        ("cl100k_base", "cl100k_base"),
        ({"encoding": "o200k_base", "fudge": 1}, "o200k_base*1"),
        ({"encoding": "o200k_base", "fudge": 1.5}, "o200k_base"),
        ("zoo", "zoo"),
        ("cl100k", "cl100k"),
    ):
        assert parse_description({**GOOD, "tokenizer": declared}, "f").tokenizer == name


def test_policies_from_the_command_line_are_checked() -> None:
    assert check_policy("orphans", "to_text", "--policy") == ("orphans", "to_text")
    with pytest.raises(UsageError, match=r"^--policy: unknown policy 'orphan' \(did you mean 'orphans'\?\)"):
        check_policy("orphan", "to_text", "--policy")
    with pytest.raises(UsageError, match="unknown policy 'frob'; expected one of orphans, trailing"):
        resolve({"frob": "x"})
    assert resolve({"orphans": "any"}, {"trailing": "close"})["orphans"] == "any"


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        ("UnknownTokenizer", "tokenizer 'o200k-base': unknown tokenizer"),
        ("UnknownPolicy", "unknown policy 'orphan'"),
        ("UnknownPolicyValue", "orphans=totext: unknown value"),
        ("UnknownOp", "unknown op 'normalise'"),
        ("NoProtocol", "protocol: missing"),
        ("ProtocolTwo", "protocol 2: not supported"),
        ("WrongTypes", "version: expected a string, got 3"),
    ],
)
def test_bad_declarations_stop_the_target_at_the_handshake(cls: str, message: str) -> None:
    with pytest.raises(TargetFailure, match=message):
        open_target(f"python:tests.targets.declares:{cls}")


def _check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxmodel", "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_unknown_tokenizer_exits_3_before_any_property(tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    run = _check(
        "--target",
        "python:tests.targets.declares:UnknownTokenizer",
        "--profile",
        "ci",
        "--fixtures",
        str(tmp_path / "fx"),
        "--junit",
        str(junit),
    )
    assert run.returncode == 3, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("ctxmodel:")]
    assert len(lines) == 1 and "unknown tokenizer" in lines[0] and "o200k_base or cl100k_base" in lines[0]
    assert "passed" not in run.stdout and "FAILED" not in run.stdout  # no property ran
    assert not (tmp_path / "fx").exists()


def test_unknown_policy_on_the_command_line_exits_2(tmp_path: Path) -> None:
    run = _check("--target", "reference", "--policy", "orphan=to_text", "--fixtures", str(tmp_path / "fx"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--policy: unknown policy 'orphan' (did you mean 'orphans'?)" in run.stderr
    assert "passed" not in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("cls", ["O200kBase", "O200kObject", "RawObject"])
def test_a_target_declaring_the_encoding_name_passes_every_property(tmp_path: Path, cls: str) -> None:
    run = _check(
        "--target",
        f"python:tests.targets.declares:{cls}",
        "--profile",
        "ci",
        "--fixtures",
        str(tmp_path / "fx"),
        "--regressions",
        str(tmp_path / "none"),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "FAILED" not in run.stdout and "unknown counter" not in run.stdout
