"""Hypothesis settings for the reference's own unit tests inside a mutation run (copied as
``tests/conftest.py`` into the scratch directory by ``run.py``).

The project's ``tests/conftest.py`` draws fresh random examples each run; under mutmut a kill must be
the same every time the mutant is run, so here the unit tests get the ``mutation`` profile's rules:
derandomized, no database, no deadline, ``differing_executors`` quiet (mutmut calls the same test
functions again in one process).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ctxmodel-mutation-unit",
    max_examples=int(os.environ.get("CTXMODEL_MUTATION_EXAMPLES", "30")),
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.differing_executors,
    ],
)
settings.load_profile("ctxmodel-mutation-unit")
