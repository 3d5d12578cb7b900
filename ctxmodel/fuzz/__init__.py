"""Fuzz campaigns: a thin orchestrator over plain Hypothesis, never an engine of our own.

- ``campaign``: N worker processes, each with its own seed, round-robin over the properties (more
  examples for the ones still finding new events), one shared example database, one coordinator
  that writes every fixture (contract §8) and the report.
- ``agent_loop``: the stateful model of an agent session, run as one more "property".
- ``report``: the self-contained HTML page and ``report.json``.
"""

from __future__ import annotations

__all__: list[str] = []
