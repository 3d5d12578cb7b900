"""The README's tour runs as written: each debugging command, with the virtualenv active,
exits as its comment says, and the legend names every mark the compact rendering prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _tour_commands() -> list[str]:
    tour = README.split("## A tour in one screen", 1)[1]
    block = re.search(r"```sh\n(.*?)```", tour, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_tour_says_how_to_run_ctxmodel() -> None:
    tour = README.split("## A tour in one screen", 1)[1].split("```", 1)[0]
    assert ". .venv/bin/activate" in tour and ".venv/bin/ctxmodel" in tour


@pytest.mark.parametrize("line", _tour_commands())
def test_each_debugging_command_of_the_tour_runs(line: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip
    expected = 1 if "exit 1" in line else 0
    assert done.returncode == expected, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_legend_covers_every_mark_render_prints() -> None:
    legend = README.split("| mark | meaning |", 1)[1].split("\n\n", 1)[0]
    for mark in ("•", "·", ">>", "#N", "[use ID:NAME]", "[result ID]", "!", "(synthetic)", "\u00d7N", "ID…",
                 "summary ID", "marker ID", "condensed→ID", "truncated→ID", "condenseId=", "truncationId=", "ts="):
        assert mark in legend, mark
