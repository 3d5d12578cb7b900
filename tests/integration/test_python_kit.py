"""The Python target kit (``ctxmodel/targetkit/python``): a library's adapter in its own interpreter.

Each test writes a small adapter on the kit into a temporary folder and runs it in a fresh
interpreter started with ``-I`` (isolated: no site-packages of ctxmodel's, no user paths), the
kit's folder its only addition to the path, so what is tested is what a library's environment
holds: the standard library, the kit, the adapter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxmodel.targetkit import python_kit_dir
from ctxmodel.targets.spec import open_target

SETUP = f"import sys\nsys.path.insert(0, {str(python_kit_dir())!r})\n"

ADAPTER = """
from ctxmodel_target import serve
import json
print("loading the library prints this")

def count(params):
    return {"tokens": sum(len(json.dumps(m)) for m in params["messages"])}

def trim(params):
    messages = params["messages"]
    if params.get("maxTokens") == -1:
        messages.pop()
    if params.get("maxTokens") == -2:
        raise ValueError("no room")
    if params.get("maxTokens") == -3:
        return {"tokens": float("nan")}
    if params.get("maxTokens") == -4:
        return ["not", "an", "object"]
    return {"messages": messages[-1:]}

def roundtrip(params):
    return {"messages": params["messages"]}

serve(name="tiny", version="1.0", dialect="openai-chat", policies={"trimSystem": "any"},
      ops={"trim": trim, "count": count, "roundtrip": roundtrip})
"""


def write_adapter(tmp_path: Path, body: str = ADAPTER) -> Path:
    path = tmp_path / "adapter.py"
    path.write_text(SETUP + body)
    return path


def talk(script: Path, requests: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    data = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run(
        [sys.executable, "-I", str(script)], input=data.encode(), capture_output=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.decode().splitlines()], proc.stderr.decode()


def minimize_request(id_: int, max_tokens: int, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if messages is None:
        messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    return {"id": id_, "op": "trim", "params": {"messages": messages, "maxTokens": max_tokens}}


def test_describe_is_built_from_the_arguments_and_prints_go_to_stderr(tmp_path: Path) -> None:
    replies, stderr = talk(write_adapter(tmp_path), [{"id": 1, "op": "describe", "params": {}}])
    assert replies == [
        {
            "id": 1,
            "result": {
                "protocol": 1,
                "name": "tiny",
                "version": "1.0",
                "ops": ["count", "trim"],
                "kit": "python 1.0.0",
                "dialect": "openai-chat",
                "policies": {"trimSystem": "any"},
            },
        }
    ]
    assert "loading the library prints this" in stderr


def test_a_failing_op_is_its_reply_and_the_loop_goes_on(tmp_path: Path) -> None:
    replies, _ = talk(
        write_adapter(tmp_path),
        [
            minimize_request(1, -2),
            minimize_request(2, -3),
            minimize_request(3, -4),
            {"id": 4, "op": "normalize"},
            minimize_request(5, 9),
        ],
    )
    assert replies[0]["error"]["message"].startswith("ValueError: no room (at adapter.py:")
    assert "not strict JSON" in replies[1]["error"]["message"]
    assert replies[2]["error"]["message"] == "trim returned list, not an object"
    assert replies[3]["error"]["message"] == "tiny has no op 'normalize'"
    assert replies[4] == {"id": 5, "result": {"messages": [{"role": "user", "content": "b"}]}}


def test_an_op_that_changes_its_params_is_an_error_naming_the_path(tmp_path: Path) -> None:
    replies, _ = talk(write_adapter(tmp_path), [minimize_request(1, -1)])
    assert replies[0]["error"]["message"] == "trim mutated its input at messages"


def test_a_lone_surrogate_round_trips_as_its_escape(tmp_path: Path) -> None:
    script = write_adapter(tmp_path)
    params = '{"messages": [{"role": "user", "content": "\\ud83d x"}], "maxTokens": 9}'
    data = '{"id": 1, "op": "trim", "params": ' + params + "}\n"
    proc = subprocess.run([sys.executable, "-I", str(script)], input=data.encode(), capture_output=True, check=True)
    assert proc.stdout.decode() == '{"id":1,"result":{"messages":[{"role":"user","content":"\\ud83d x"}]}}\n'


def test_the_gate_drives_a_kit_adapter_as_a_process_target(tmp_path: Path) -> None:
    script = write_adapter(tmp_path)
    target = open_target(f"exec:{sys.executable} -I {script}")
    try:
        assert target.description.dialect == "openai-chat"
        assert target.description.ops >= {"trim", "count"}
        reply = target.call("trim", minimize_request(1, 100)["params"])
        assert reply == {"messages": [{"role": "user", "content": "b"}]}
    finally:
        target.close()


def test_an_adapter_s_own_op_is_answered_but_not_declared(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "a"}]
    replies, _ = talk(
        write_adapter(tmp_path),
        [{"id": 1, "op": "describe", "params": {}}, {"id": 2, "op": "roundtrip", "params": {"messages": messages}}],
    )
    assert "roundtrip" not in replies[0]["result"]["ops"]
    assert replies[1] == {"id": 2, "result": {"messages": messages}}


def test_say_reaches_the_real_stdout_after_the_kit_is_imported(tmp_path: Path) -> None:
    script = tmp_path / "lister.py"
    script.write_text(SETUP + "import ctxmodel_target\nprint('to stderr')\nctxmodel_target.say('first\\nsecond')\n")
    proc = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["first", "second"] and "to stderr" in proc.stderr
