"""Content equality compares numbers by value, as IEEE doubles (contract §1).

A JavaScript target that reads with ``JSON.parse`` and writes with ``JSON.stringify`` returns
``{"hello": 0}`` for ``{"hello": 0.0}``, ``100`` for ``1e2`` and ``12345678901234567000`` for
``12345678901234567890``: the same content, as the API and every JavaScript agent see it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodel.properties.json_reading import canon

ROOT = Path(__file__).resolve().parents[2]
PLAIN = "exec:node tests/targets/node_plain_json.js"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"hello": 0.0}, {"hello": 0}),
        ([1e2], [100]),
        (-0.0, 0),
        (12345678901234567890, 12345678901234567000),
        (2**53 + 1, float(2**53)),
        (10**400, float("inf")),
        ({"a": 1, "b": [0.5]}, {"b": [0.5], "a": 1.0}),
    ],
)
def test_numbers_equal_as_doubles_are_the_same_content(a: object, b: object) -> None:
    assert canon(a) == canon(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [(True, 1), (False, 0), ({"x": True}, {"x": 1.0}), (0.1, 0.1000001), (2**53, 2**53 + 2), ("0", 0), (None, 0)],
)
def test_other_values_stay_apart(a: object, b: object) -> None:
    assert canon(a) != canon(b)


def _fixture(path: Path, prop: str) -> None:
    messages = [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "read_file",
                    "input": {"hello": 0.0, "n": 1e2, "big": 12345678901234567890, "neg": -0.0},
                }
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}], "ts": 1.0},
    ]
    fixture = {
        "schema": "ctxmodel-fixture/1",
        "property": prop,
        "op": "effective",
        "params": {"messages": messages},
        "observed": [],
        "target": {"name": "node-plain-json", "version": "1.0.0"},
        "policies": {},
        "tokenizer": "zoo",
        "found": {"date": "2026-01-01", "seed": 0, "hypothesis": ""},
        "note": "numbers by value (contract §1)",
    }
    path.write_text(json.dumps(fixture), encoding="utf-8")


def _ctxmodel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxmodel", *args], cwd=ROOT, capture_output=True, text=True, timeout=1800
    )


@needs_node
def test_a_plain_json_target_edits_no_content(tmp_path: Path) -> None:
    for prop in ("effective.subsequence", "effective.visibility"):
        _fixture(tmp_path / f"{prop}.json", prop)
    run = _ctxmodel("replay", str(tmp_path), "--target", PLAIN)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("passes") == 2


@needs_node
@pytest.mark.slow
def test_a_plain_json_target_passes_the_gate(tmp_path: Path) -> None:
    run = _ctxmodel(
        "check", "--target", PLAIN, "--profile", "ci",
        "--fixtures", str(tmp_path / "fx"), "--regressions", str(tmp_path / "none"),
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "FAILED" not in run.stdout
