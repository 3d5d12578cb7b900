"""Hypothesis settings for gate runs: ``ci``, ``dev``, ``thorough``, ``replay``, ``mutation``.

Our profiles are built here and handed to each property explicitly, never looked up by name in
Hypothesis's registry: Hypothesis auto-loads its *own* ``ci`` profile when ``CI`` is set, and that
one has no database. ``ci`` is deterministic by a fixed seed per property rather than
``derandomize=True``, because Hypothesis ties derandomize to ``database=None`` and a CI cache of
failing examples is worth keeping; fixtures (contract §8) remain the memory.

``mutation`` is for mutation testing: mutmut re-runs the same tests once per mutant, so a kill must
not depend on a random stream or on a failing example another mutant left in a database; it is
derandomized, has no database, and suppresses
``differing_executors`` (mutmut calls the same test functions again in one process).

Every profile: ``deadline=None`` (process targets on shared machines are slow and jittery, and a
deadline would report their latency as a bug), ``report_multiple_bugs=True`` (each distinct finding
kind raises its own exception type, so Hypothesis keeps generating after the first bug, shrinks
every kind on its own and replays each kind's minimal example last: contract §8), and ``too_slow``
suppressed (a slow target is not a slow strategy).
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
    #: Hypothesis's ``derandomize``: the examples follow from the test alone (no database then).
    derandomize: bool = False

    def hypothesis_settings(
        self, *, max_examples: int | None = None, database: ExampleDatabase | str | None = "default"
    ) -> settings:
        database = self.database(database)
        quiet = [*_QUIET_CHECKS, HealthCheck.differing_executors] if self.derandomize else _QUIET_CHECKS
        return settings(
            max_examples=max_examples if max_examples is not None else self.max_examples,
            deadline=None,
            # Hypothesis refuses derandomize together with a database.
            database=database if not isinstance(database, str) and not self.derandomize else None,
            derandomize=self.derandomize,
            phases=self.phases,
            print_blob=self.print_blob,
            report_multiple_bugs=True,
            suppress_health_check=quiet,
        )

    def database(self, database: ExampleDatabase | str | None = "default") -> ExampleDatabase | None:
        """The example database a run of this profile uses: ``"default"`` is the profile's own."""
        if database == "default":
            return DirectoryBasedExampleDatabase(database_path()) if self.use_database else None
        return database if not isinstance(database, str) else None


#: Every phase but ``target``. The strategies steer toward more pairing defects with ``target()``, and
#: Hypothesis hands the second half of a run to hill-climbing on the best history: in a 60-example
#: ci run only 19-31 examples were distinct (40-45 without it), and the bug zoo's pairing and
#: visibility variants were found as early or earlier without it, ``bug_vis_dangling_parent_hides``
#: only without it (benchmarks/README.md). Runs of hundreds of examples keep it.
_SHORT_RUN_PHASES = tuple(p for p in Phase if p is not Phase.target)

PROFILES: dict[str, Profile] = {
    "ci": Profile(
        "ci", max_examples=60, deterministic=True, use_database=True, print_blob=True, phases=_SHORT_RUN_PHASES
    ),
    "dev": Profile("dev", max_examples=100, deterministic=False, use_database=True, phases=_SHORT_RUN_PHASES),
    "thorough": Profile("thorough", max_examples=1000, deterministic=False, use_database=True),
    # Only explicit examples: the promoted regressions of each property, nothing generated.
    "replay": Profile("replay", max_examples=1, deterministic=True, use_database=False, phases=(Phase.explicit,)),
    # Mutation testing: few examples (each covering test runs once per mutant), the same ones every time.
    "mutation": Profile(
        "mutation",
        max_examples=25,
        deterministic=True,
        use_database=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        derandomize=True,
    ),
}


def database_path() -> str:
    """The example database (a cache, never the memory): Hypothesis's usual place, or
    ``HYPOTHESIS_STORAGE_DIRECTORY`` for sandboxed CI, where the working tree may be read-only."""
    root = os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY", ".hypothesis")
    return os.path.join(root, "examples")


def default_profile() -> str:
    return "ci" if os.environ.get("CI") else "dev"


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UsageError(f"--profile {name!r}: expected one of {', '.join(PROFILES)}") from None
