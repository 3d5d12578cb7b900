"""Targets (contract §7): spec parsing, the reference, python: and exec: transports and their failures."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ctxmodel.errors import UsageError
from ctxmodel.targets import TargetFailure, TargetSpec, open_target, parse_spec
from ctxmodel.targets.process import ProcessTarget, command_argv
from ctxmodel.targets.python import PythonTarget

FAULTY = Path(__file__).parents[1] / "targets" / "faulty"
NODE = Path(__file__).parents[2] / "examples" / "targets" / "node"
PAIR = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {"n": 2**70}}]},
    {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "tool_result", "tool_use_id": "t1"}]},
]


def faulty(name: str) -> str:
    return f"{shlex.quote(sys.executable)} -S {shlex.quote(str(FAULTY / name))}"


def test_specs_parse_and_refuse_with_one_line() -> None:
    assert parse_spec("reference") == TargetSpec("reference")
    assert parse_spec("python:pkg.mod:obj") == TargetSpec("python", "pkg.mod:obj")
    assert parse_spec("exec:node a.js --x") == TargetSpec("exec", "node a.js --x")
    assert str(parse_spec("exec:node a.js")) == "exec:node a.js"
    for bad in ("", "refrence", "exec:", "python:", "ssh:host"):
        with pytest.raises(UsageError, match="expected reference, python:"):
            parse_spec(bad)


def test_commands_with_shell_syntax_go_to_sh() -> None:
    assert command_argv("node 'my dir/t.js' --fast") == ["node", "my dir/t.js", "--fast"]
    assert command_argv("cd x && node t.js") == ["sh", "-c", "cd x && node t.js"]
    with pytest.raises(UsageError):
        command_argv("   ")


def test_reference_describes_itself_and_answers_every_op() -> None:
    target = open_target("reference")
    assert target.description.name == "ctxmodel-reference"
    assert target.description.ops >= {"describe", "normalize", "effective", "request", "recover", "count"}
    assert target.description.policies["orphans"] == "drop"
    request = target.call("request", {"messages": PAIR})["messages"]
    assert [b["type"] for b in request[2]["content"]] == ["tool_result", "text"]
    assert request[1]["content"][0]["input"] == {"n": 2**70}
    orphaned = [*PAIR[:2], PAIR[0], PAIR[2]]
    to_text = target.call("normalize", {"messages": orphaned, "policies": {"orphans": "to_text"}})
    assert to_text["messages"][-1]["content"][-1]["text"].startswith("Tool result:")
    closed = target.call("normalize", {"messages": PAIR[:2], "policies": {"trailing": "close"}})
    assert closed["messages"][-1]["content"][0]["is_error"] is True
    assert target.call("count", {"messages": [], "systemPrompt": ""}) == {"tokens": 0}
    assert target.call("count", {"messages": PAIR})["tokens"] > 0
    recovered = target.call("recover", {"messages": PAIR, "contextWindow": 100, "maxTokens": 200})
    assert recovered["error"].startswith("Context window recovery failed")


def test_reference_reports_bad_input_as_an_error_reply() -> None:
    target = open_target("reference")
    with pytest.raises(TargetFailure) as info:
        target.call("normalize", {"messages": [{"role": "robot", "content": "x"}]})
    assert info.value.kind == "error-reply"
    assert "messages.0.role" in str(info.value)


class _Mutating:
    """A python: target object that mutates what it is given and keeps a reference to it."""

    kept: ClassVar[list[Any]] = []

    def normalize(self, params: dict[str, Any]) -> dict[str, Any]:
        params["messages"].append({"role": "user", "content": "sneaky"})
        self.kept.append(params)
        return params

    def effective(self, params: dict[str, Any]) -> Any:
        return ["not", "an", "object"]

    def count(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": float("nan")}

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        no_messages: dict[str, dict[str, Any]] = {}
        return no_messages["messages"]


def test_python_target_hands_params_over_and_checks_replies() -> None:
    target = PythonTarget("tests.integration.test_targets:_Mutating")
    assert target.description.ops == {"normalize", "effective", "count", "request"}
    params = {"messages": [{"role": "user", "content": "hi"}]}
    reply = target.call("normalize", params)
    # The params go in as they are (the probe sends a private copy), so a mutation is visible
    # to the purity properties instead of hidden behind a copy.
    assert params["messages"][-1] == {"role": "user", "content": "sneaky"}
    reply["messages"].clear()
    assert len(_Mutating.kept[-1]["messages"]) == 2  # and a fresh copy came out
    with pytest.raises(TargetFailure, match="expected a JSON object reply, got list") as info:
        target.call("effective", params)
    assert info.value.kind == "protocol"
    with pytest.raises(TargetFailure, match="not strict JSON"):
        target.call("count", params)
    with pytest.raises(TargetFailure) as raised:
        target.call("request", params)
    assert raised.value.kind == "exception"
    assert "KeyError: 'messages' (at " in str(raised.value) and "test_targets.py:" in str(raised.value)


def test_python_target_raising_names_type_and_place() -> None:
    target = open_target("python:tests.targets.faulty.raising")
    assert target.description.name == "faulty-raising"
    assert target.call("normalize", {"messages": PAIR[:1]})["messages"] == PAIR[:1]
    with pytest.raises(TargetFailure, match=r"IndexError: .* \(at .*raising.py:\d+\)"):
        target.call("normalize", {"messages": PAIR[:2]})


def test_python_target_that_cannot_start() -> None:
    for spec, message in (
        ("python:no.such.module", "cannot import"),
        ("python:tests.integration.test_targets:Nothing", "has no Nothing"),
        ("python:json", "defines none of the ops"),
    ):
        with pytest.raises(TargetFailure, match=message) as info:
            open_target(spec)
        assert info.value.kind == "start"


def test_process_target_that_exits_at_start_names_its_stderr() -> None:
    with pytest.raises(TargetFailure, match="left-pad") as info:
        open_target(f"exec:{faulty('exit_at_start.py')}")
    assert info.value.kind == "start"
    with pytest.raises(TargetFailure, match="cannot start") as missing:
        open_target("exec:/no/such/binary --flag")
    assert missing.value.kind == "start"


def test_process_target_restarts_after_a_crash() -> None:
    with ProcessTarget(faulty("crash_on_input.py")) as target:
        assert target.description.name == "faulty-echo"
        assert target.call("normalize", {"messages": PAIR[:1]})["messages"] == PAIR[:1]
        with pytest.raises(TargetFailure, match=r"exited without replying.*exit code 139.*segmentation") as info:
            target.call("normalize", {"messages": PAIR})
        assert info.value.kind == "crash"
        assert target.call("normalize", {"messages": PAIR[:1]})["messages"] == PAIR[:1]
        assert target.restarts == 1


def test_a_restart_is_not_charged_to_the_input_after_it(tmp_path: Path) -> None:
    """A child that takes longer to start than a request may take (an agent bundle, LiteLLM's
    import on a busy machine) is let start, after a crash too, before the next input's deadline."""
    script = tmp_path / "slow_crash.py"
    script.write_text(
        f"import sys, time\nsys.path.insert(0, {str(FAULTY)!r})\n"
        "time.sleep(1.0)\n"
        "from _server import serve\n"
        "def misbehave(request):\n"
        "    if len(request['params'].get('messages', [])) >= 2:\n"
        "        import os; os._exit(3)\n"
        "    return False\n"
        "serve(misbehave)\n"
    )
    with ProcessTarget(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", timeout=0.5) as target:
        assert target.description.name  # the first start took longer than the timeout
        with pytest.raises(TargetFailure) as info:
            target.call("normalize", {"messages": PAIR})
        assert info.value.kind == "crash"
        assert target.call("normalize", {"messages": PAIR[:1]})["messages"] == PAIR[:1]  # not a timeout


def test_process_target_times_out_a_hung_request_and_recovers() -> None:
    with ProcessTarget(faulty("hang.py"), timeout=0.5) as target:
        with pytest.raises(TargetFailure, match=r"no reply within 0.5 s") as info:
            target.call("normalize", {"messages": PAIR})
        assert info.value.kind == "timeout"
        assert target.call("effective", {"messages": PAIR})["messages"] == PAIR


@pytest.mark.parametrize(
    ("script", "match"),
    [
        ("garbage.py", r"not JSON: 'normalizing 2 messages\.\.\.'"),
        ("wrong_id.py", "reply has id 3, expected 2"),
        ("huge.py", "reply larger than 32 MB"),
    ],
)
def test_process_target_rejects_protocol_breaks(script: str, match: str) -> None:
    with ProcessTarget(faulty(script)) as target:
        with pytest.raises(TargetFailure, match=match) as info:
            target.call("normalize", {"messages": PAIR})
        assert info.value.kind == "protocol"
        assert target.call("effective", {"messages": PAIR[:1]})["messages"] == PAIR[:1]


def test_process_target_refuses_a_huge_reply_without_reading_it_all() -> None:
    with ProcessTarget(faulty("huge.py"), max_reply=1 << 20) as target:
        with pytest.raises(TargetFailure, match="larger than 1 MB"):
            target.call("normalize", {"messages": []})
        # Memory stays bounded: at most the cap plus one read chunk, never the 50 MB line.
        assert len(target._buf) <= (1 << 20) + (1 << 20)


def test_process_target_error_replies_keep_the_child() -> None:
    with ProcessTarget(faulty("crash_on_input.py")) as target:
        with pytest.raises(TargetFailure) as info:
            target.call("frobnicate", {})
        assert info.value.kind == "error-reply"
        assert target.restarts == 0
        with pytest.raises(UsageError, match="not strict JSON"):
            target.call("normalize", {"messages": [], "x": float("inf")})


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_example_speaks_the_protocol_losslessly() -> None:
    with ProcessTarget(f"node {shlex.quote(str(NODE / 'target.js'))}") as target:
        assert target.description.name == "node-example"
        assert target.description.ops == {"describe", "effective", "normalize", "request"}
        request = target.call("request", {"messages": PAIR})["messages"]
        assert request == open_target("reference").call("request", {"messages": PAIR})["messages"]
        with pytest.raises(TargetFailure, match="unknown op"):
            target.call("recover", {"messages": PAIR})


def test_reference_declaring_another_tokenizer_counts_and_recovers_with_it() -> None:
    from ctxmodel import codec
    from ctxmodel.targets.reference import ReferenceTarget
    from ctxmodel.tokens import get_counter

    target = ReferenceTarget({"encoding": "o200k_base", "fudge": 1.25})
    assert target.description.tokenizer == "o200k_base*1.25"
    messages = [{"role": "user", "content": "the quick brown fox jumps over the lazy dog " * 40}]
    tokens = target.call("count", {"messages": messages})["tokens"]
    assert tokens == get_counter("o200k_base*1.25").count_messages(codec.load(messages))
    assert tokens < ReferenceTarget().call("count", {"messages": messages})["tokens"]
    window = {"messages": messages, "contextWindow": 100_000, "maxTokens": 1000}
    assert target.call("recover", window)["newContextTokens"] == tokens


def test_a_python_target_declaring_an_op_it_does_not_define_does_not_start(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "declares_more.py").write_text(
        "def describe(params):\n"
        "    return {'protocol': 1, 'name': 'x', 'version': '1', 'ops': ['describe', 'normalize', 'recover']}\n"
        "def normalize(params):\n"
        "    return {'messages': params['messages']}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetFailure) as info:
        open_target("python:declares_more")
    assert info.value.kind == "start"
    assert "describe declares recover, which the module does not define" in str(info.value)
