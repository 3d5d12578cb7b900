"""Hypothesis settings for the project's own tests: bounded, no deadline (shared 2-core machines)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "tests",
    max_examples=int(os.environ.get("CTXMODEL_TEST_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "tests"))
