"""Replaying the promoted fixtures of this directory (contract §8), for the project's own tests.

Each ``*.json`` here is a failure someone once found (in the reference or in another target),
kept by value: replaying it against the reference must pass, now and after every change, or the
reference has regressed into a bug the gate already knows.
"""

from __future__ import annotations

from pathlib import Path

from ctxmodel.fixtures import Fixture, load_fixture, replay
from ctxmodel.gate import Judgement
from ctxmodel.targets.base import Target

__all__ = ["HERE", "fixture_paths", "replay_one"]

HERE = Path(__file__).parent


def fixture_paths() -> list[Path]:
    return sorted(p for p in HERE.glob("*.json") if not p.name.startswith("."))


def replay_one(path: Path, target: Target) -> tuple[Fixture, Judgement]:
    fixture = load_fixture(path)
    verdict: Judgement = replay(fixture, target, source=str(path))
    return fixture, verdict
