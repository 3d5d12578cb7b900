"""The Roo-Code and Zoo-Code adapters (``examples/targets/{roo,zoo}-code``): build and op mapping.

CI has no checkout of either agent, so the build runs on ``tests/fixtures/fake-agent``, a stand-in of
our own with the same paths and function names, whose answers are known. The builds here are made
with ``--out``, which installs esbuild from npm into the out folder's ``node_modules``; without node
or npm these tests are skipped.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE = REPO / "tests" / "fixtures" / "fake-agent"
AGENTS = {"roo-code": "Roo-Code", "zoo-code": "Zoo-Code"}
POLICIES = {
    "orphans": "relabel", "trailing": "leave", "resultOrder": "any", "recoverSuccess": "converges",
    "inputs": "agent-stored",
}

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _need_npm() -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the adapter's build installs esbuild from npm")


def _build(folder: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(folder / "build.mjs"), str(FAKE), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module", params=sorted(AGENTS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    folder = REPO / "examples" / "targets" / request.param
    _need_npm()
    out = tmp_path_factory.mktemp(request.param) / "build"
    proc = _build(folder, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "built " in proc.stderr
    return request.param, folder, out


def talk(folder: Path, out: Path, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(requests))
    env = {**os.environ, "CTXMODEL_AGENT_BUILD": str(out)}
    proc = subprocess.run(
        ["node", str(folder / "target.cjs")],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    for reply in replies:
        assert "result" in reply, reply
    return [r["result"] for r in replies]


def op(name: str, **params: Any) -> dict[str, Any]:
    return {"op": name, "params": params}


def test_the_build_bundles_the_history_code_and_stubs_the_rest(built: tuple[str, Path, Path]) -> None:
    agent, _, out = built
    meta = json.loads((out / "agent.json").read_text())
    assert meta["agent"] == AGENTS[agent]
    assert meta["version"] == "0.0.7"
    assert meta["commit"] is None  # the stand-in is a folder of this repository, not a checkout
    assert meta["warnings"] == []
    assert set(meta["real"]) == {
        "src/api/providers/base-provider.ts",
        "src/api/transform/anthropic-filter.ts",
        "src/api/transform/image-cleaning.ts",
        "src/core/condense/index.ts",
        "src/core/context-management/index.ts",
        "src/core/task/Task.ts",
        "src/core/task/mergeConsecutiveApiMessages.ts",
        "src/core/task/validateToolResultIds.ts",
        "src/shared/array.ts",
        "src/utils/countTokens.ts",
        "src/utils/tiktoken.ts",
    }
    bundle = (out / "agent.cjs").read_text()
    # The modules that throw when loaded were stubbed, never bundled.
    assert "must be stubbed, never bundled" not in bundle
    assert "[stub " in bundle or "stub(" in bundle


def test_describe(built: tuple[str, Path, Path]) -> None:
    agent, folder, out = built
    (describe,) = talk(folder, out, op("describe"))
    assert describe == {
        "protocol": 1,
        "name": AGENTS[agent],
        "version": "0.0.7",
        "ops": ["describe", "effective", "normalize", "request", "recover", "count"],
        "tokenizer": "o200k_base",
        "policies": POLICIES,
    }


MARKED = [
    {"role": "user", "content": "task", "ts": 1},
    {"role": "assistant", "content": "old", "ts": 2, "truncationParent": "t1"},
    {
        "role": "user",
        "content": "[Sliding window truncation: 1 messages hidden]",
        "isTruncationMarker": True,
        "truncationId": "t1",
    },
    {"role": "user", "content": "new", "ts": 4},
]


def test_effective_is_the_agents_get_effective_api_history(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    (effective,) = talk(folder, out, op("effective", messages=MARKED))
    assert effective["messages"] == [MARKED[0], MARKED[2], MARKED[3]]


def test_normalize_is_the_append_time_repair_message_by_message(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    uses: list[dict[str, Any]] = [{"type": "tool_use", "id": i, "name": "read", "input": {}} for i in ("a", "b")]
    history = [
        {"role": "user", "content": "go", "ts": 1},
        {"role": "assistant", "content": uses, "ts": 2},
        {
            "role": "user",
            "content": [{"type": "text", "text": "and"}, {"type": "tool_result", "tool_use_id": "b", "content": "B"}],
        },
        {"role": "assistant", "content": [uses[0] | {"id": "c"}], "ts": 5},
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Conversation Summary"}],
            "isSummary": True,
            "condenseId": "s",
        },
    ]
    (normalized,) = talk(folder, out, op("normalize", messages=history))
    got = normalized["messages"]
    assert got[:2] == history[:2]
    # The stand-in's repair ran on the appended user message: results first, a synthetic one for "a".
    assert [b.get("tool_use_id", b["type"]) for b in got[2]["content"]] == ["a", "b", "text"]
    assert got[2]["content"][0]["is_error"] is True
    assert "ts" not in got[2]  # the Task's append-time stamp is put back to the message's own (none)
    assert got[3] == history[3]
    # A summary is written by context management, never appended: no synthetic result for "c" in it.
    assert got[4] == history[4]


def test_request_is_the_pipeline_the_task_runs_before_sending(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    history = [
        *MARKED,
        {"role": "user", "content": [{"type": "text", "text": "more"}], "ts": 5},
        {
            "role": "assistant",
            "content": [{"type": "reasoning", "text": "hm"}, {"type": "text", "text": "ok"}],
            "ts": 6,
        },
    ]
    (request,) = talk(folder, out, op("request", messages=history))
    assert request["messages"] == [
        {"role": "user", "content": "task"},
        # effective history, then user messages merged (the marker is never merged) ...
        {"role": "user", "content": MARKED[2]["content"]},
        {"role": "user", "content": [{"type": "text", "text": "new"}, {"type": "text", "text": "more"}]},
        # ... role and content only (buildCleanConversationHistory), no reasoning block (the provider's filter)
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


def recover_params(history: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"messages": history, "contextWindow": 10000, "maxTokens": 1000, "systemPrompt": "sys!", **extra}


LONG: list[dict[str, Any]] = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "x" * 400, "ts": 10 + i}
    for i in range(7)
]


def test_recover_is_manage_context_with_the_harness_total_tokens(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    over, again, within = talk(
        folder,
        out,
        op("recover", **recover_params(LONG, totalTokens=9000)),
        op("recover", **recover_params(LONG, totalTokens=9000)),
        op("recover", **recover_params(LONG, totalTokens=100)),
    )
    last = math.ceil(math.ceil(len(LONG[-1]["content"]) / 4) * 1.5)  # the stand-in's counter
    assert over["prevContextTokens"] == 9000 + last  # totalTokens + the agent's count of the last message
    assert over["error"] is None
    assert over["messagesRemoved"] == 2
    assert [m.get("truncationParent") == over["truncationId"] for m in over["messages"]].count(True) == 2
    assert over["messages"][3]["isTruncationMarker"] is True
    assert again == over  # deterministic truncationId for the same input
    assert within == {
        "messages": LONG,
        "error": None,
        "messagesRemoved": 0,
        "prevContextTokens": 100 + last,
        "newContextTokens": 100 + last,
        "truncationId": None,
    }


def test_recover_without_total_tokens_counts_it_as_the_contract_says(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    history = [{"role": "user", "content": "abcd" * 2}, {"role": "assistant", "content": "abcd"}]
    (result,) = talk(folder, out, op("recover", **recover_params(history)))
    # count(system) + count(effective) - count(last): 2 + ceil(1.5 * 3) - 2 = 5; plus the last again: 7
    assert result["prevContextTokens"] == 7


def test_count_is_the_agents_counter(built: tuple[str, Path, Path]) -> None:
    _, folder, out = built
    history = [
        {"role": "user", "content": "abcdefgh"},
        {"role": "assistant", "content": [{"type": "text", "text": "abcd"}]},
    ]
    with_system, without = talk(
        folder, out, op("count", messages=history, systemPrompt="abcd"), op("count", messages=history)
    )
    assert with_system == {"tokens": 2 + 5}  # ceil(1.5 * 1) + ceil(1.5 * (2 + 1)), one call each
    assert without == {"tokens": 5}


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under `roots`, with its size and modification time."""
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for path in [root, *root.rglob("*")]:
            st = path.lstat()
            seen[str(path)] = (st.st_size, st.st_mtime_ns)
    return seen


def test_a_build_with_out_writes_nothing_outside_the_out_folder(tmp_path: Path) -> None:
    _need_npm()
    folder = REPO / "examples" / "targets" / "zoo-code"
    watched = (REPO / "examples" / "targets", FAKE)
    before = _tree(*watched)
    out = tmp_path / "out"
    proc = _build(folder, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _tree(*watched) == before
    assert (out / "agent.cjs").is_file() and (out / "node_modules" / "esbuild" / "package.json").is_file()
    assert str(folder) not in proc.stderr


def test_no_build_is_a_start_error_that_names_the_folder_and_the_variable(tmp_path: Path) -> None:
    folder = REPO / "examples" / "targets" / "zoo-code"
    nothing = tmp_path / "nothing"
    env = {**os.environ, "CTXMODEL_AGENT_BUILD": str(nothing)}
    proc = subprocess.run(
        ["node", str(folder / "target.cjs")], input="", capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert proc.returncode != 0
    assert f"no build in {nothing} (from CTXMODEL_AGENT_BUILD)" in proc.stderr
    assert f"build.mjs PATH-TO-YOUR-ZOO-CODE-CHECKOUT --out {nothing}" in proc.stderr
    assert "    at " not in proc.stderr  # the message only: the gate shows a dead target's last lines


def test_no_default_build_says_that_the_variable_is_not_set(tmp_path: Path) -> None:
    copy = tmp_path / "targets"
    shutil.copytree(REPO / "examples" / "targets" / "roo-family", copy / "roo-family")
    (copy / "roo-code").mkdir()
    shutil.copy(REPO / "examples" / "targets" / "roo-code" / "target.cjs", copy / "roo-code" / "target.cjs")
    env = {**os.environ, "CTXMODEL_TARGET_KIT": str(REPO / "ctxmodel" / "targetkit" / "js" / "ctxmodel-target.cjs")}
    env.pop("CTXMODEL_AGENT_BUILD", None)
    proc = subprocess.run(
        ["node", str(copy / "roo-code" / "target.cjs")],
        input="", capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    assert f"no build in {copy / 'roo-code' / 'build'} (CTXMODEL_AGENT_BUILD is not set)" in proc.stderr
    assert "build.mjs PATH-TO-YOUR-ROO-CODE-CHECKOUT, or set CTXMODEL_AGENT_BUILD" in proc.stderr


#: One property per op: enough to drive every op of the adapter through the real harness.
ONE_PER_OP = (
    "effective.subsequence",
    "normalize.idempotent",
    "request.oracle",
    "recover.result-shape",
    "count.pathological-answers",
)


def test_the_gate_runs_on_the_adapter(built: tuple[str, Path, Path], tmp_path: Path) -> None:
    _, folder, out = built
    env = {**os.environ, "CTXMODEL_AGENT_BUILD": str(out)}
    chosen = [arg for name in ONE_PER_OP for arg in ("--property", name)]
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmodel", "check", "--target", f"exec:node {folder / 'target.cjs'}", *chosen,
         "--max-examples", "5", "--fixtures", str(tmp_path / "fx"), "--regressions", str(tmp_path / "none")],
        capture_output=True, text=True, env=env, timeout=900, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    table = proc.stdout[proc.stdout.rindex("property ") :]
    for name in ONE_PER_OP:
        row = next(line for line in table.splitlines() if line.startswith(name + " "))
        assert "skipped" not in row, row


def test_a_copied_adapter_finds_the_installed_kit(built: tuple[str, Path, Path], tmp_path: Path) -> None:
    agent, folder, out = built
    copy = tmp_path / "targets"
    shutil.copytree(folder.parent / "roo-family", copy / "roo-family")
    (copy / agent).mkdir()
    shutil.copy(folder / "target.cjs", copy / agent / "target.cjs")
    ctxmodel = Path(sys.executable).with_name("ctxmodel")
    env = {**os.environ, "CTXMODEL_AGENT_BUILD": str(out), "CTXMODEL": str(ctxmodel)}
    env.pop("CTXMODEL_TARGET_KIT", None)
    proc = subprocess.run(
        ["node", str(copy / agent / "target.cjs")],
        input=json.dumps({"id": 1, "op": "describe", "params": {}}) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"]["name"] == AGENTS[agent]
