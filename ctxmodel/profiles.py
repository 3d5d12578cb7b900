"""Hypothesis settings for gate runs: ``ci``, ``dev``, ``thorough``, ``replay``.

Our profiles are built here and handed to each property explicitly, never looked up by name in
Hypothesis's registry: Hypothesis auto-loads its *own* ``ci`` profile when ``CI`` is set, and that
one has no database (harness-lessons pitfall 4). ``ci`` is deterministic by a fixed seed per
property rather than ``derandomize=True``, because Hypothesis ties derandomize to ``database=None``
and a CI cache of failing examples is worth keeping; fixtures (contract §8) remain the memory.

Every profile: ``deadline=None`` (process targets on shared machines are slow and jittery,
pitfall 9), ``report_multiple_bugs=False`` (one failure per property, the shrunk one replayed
last, so the fixture is that one), and ``too_slow`` suppressed (pitfall 18).
"""

from __future__ import annotations

import os

import attrs
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from ctxmodel.errors import UsageError

__all__ = ["PROFILES", "Profile", "database_path", "default_profile", "get_profile"]

_QUIET_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


@attrs.frozen
class Profile:
    name: str
    max_examples: int
    #: A fixed seed makes a run repeatable; ``None`` draws a fresh one (printed, so it can be reused).
    deterministic: bool
    use_database: bool
    phases: tuple[Phase, ...] = tuple(Phase)
    print_blob: bool = False

    def hypothesis_settings(
        self, *, max_examples: int | None = None, database: ExampleDatabase | str | None = "default"
    ) -> settings:
        if database == "default":
            database = DirectoryBasedExampleDatabase(database_path()) if self.use_database else None
        return settings(
            max_examples=max_examples if max_examples is not None else self.max_examples,
            deadline=None,
            database=database if not isinstance(database, str) else None,
            derandomize=False,
            phases=self.phases,
            print_blob=self.print_blob,
            report_multiple_bugs=False,
            suppress_health_check=_QUIET_CHECKS,
        )


PROFILES: dict[str, Profile] = {
    "ci": Profile("ci", max_examples=60, deterministic=True, use_database=True, print_blob=True),
    "dev": Profile("dev", max_examples=100, deterministic=False, use_database=True),
    "thorough": Profile("thorough", max_examples=1000, deterministic=False, use_database=True),
    # Only explicit examples: the promoted regressions of each property, nothing generated.
    "replay": Profile("replay", max_examples=1, deterministic=True, use_database=False, phases=(Phase.explicit,)),
}


def database_path() -> str:
    """The example database (a cache, never the memory): Hypothesis's usual place, or
    ``HYPOTHESIS_STORAGE_DIRECTORY`` for sandboxed CI (pitfall 16)."""
    root = os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY", ".hypothesis")
    return os.path.join(root, "examples")


def default_profile() -> str:
    return "ci" if os.environ.get("CI") else "dev"


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UsageError(f"--profile {name!r}: expected one of {', '.join(PROFILES)}") from None
