"""What a campaign found, as plain values: the one shape the coordinator, report.json and the HTML
page share, so the page's figures can be checked against report.json.

A failure is a kind, as in ``ctxmodel check`` (``results.finding_key``: ``property/code``, or
``target-<fault>``): a property that fails in three distinct ways has three records, each with its
own shrunk input and fixture."""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = [
    "SCHEMA",
    "CampaignResult",
    "FailureRecord",
    "PropertyStats",
    "paths_in",
]

SCHEMA = "ctxmodel-fuzz-report/1"

_PATH = re.compile(r"\bmessages\.\d+(?:\.content\.\d+)?")


def paths_in(texts: Iterable[str]) -> tuple[str, ...]:
    """The API-style places (``messages.3.content.1``) a failure's text names, in order met.

    Findings and oracle violations name the offending block this way (contract §1, §6), so this is
    how the report knows which block to highlight without a second channel.
    """
    seen: dict[str, None] = {}
    for text in texts:
        for match in _PATH.findall(text):
            seen.setdefault(match, None)
    return tuple(seen)


@attrs.frozen
class FailureRecord:
    """One distinct failing kind (with its shrunk input), as the coordinator recorded it."""

    property: str
    op: str
    clause: str
    #: The findings (``fail`` severity) that broke the property, one line each.
    findings: tuple[str, ...]
    #: The params of the judged call: replayable by value (contract §8).
    params: Mapping[str, Any]
    #: What the target returned for that call (``None`` when it produced no reply).
    observed: Mapping[str, Any] | None
    #: The target's failure text when the call produced no usable reply (crash, timeout, ...).
    target_failure: str | None
    worker: int
    #: Seconds since the campaign started.
    found_at: float
    #: Examples this worker ran on this property before the first failing one.
    examples_until_failure: int
    #: Where the fixture was written (``None`` until it is).
    fixture: str | None = None
    #: The printed step sequence, for the stateful agent-loop model.
    steps: tuple[str, ...] = ()
    #: False when the campaign stopped while Hypothesis was still shrinking it.
    shrunk: bool = True
    #: The kind (``results.finding_key``); empty for a finding without a code, whose kind is the property.
    kind: str = ""

    @builtins.property
    def key(self) -> str:
        """The kind this record is the one fixture of: what two workers meeting it share."""
        return self.kind or self.property

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def highlight(self) -> tuple[str, ...]:
        return paths_in(self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.key,
            "property": self.property,
            "op": self.op,
            "clause": self.clause,
            "findings": list(self.findings),
            "params": dict(self.params),
            "observed": None if self.observed is None else dict(self.observed),
            "targetFailure": self.target_failure,
            "worker": self.worker,
            "foundAt": round(self.found_at, 3),
            "examplesUntilFailure": self.examples_until_failure,
            "fixture": self.fixture,
            "steps": list(self.steps),
            "shrunk": self.shrunk,
            "highlight": list(self.highlight),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailureRecord:
        """The record ``to_json`` wrote (a worker's message, a kind kept in a Redis campaign)."""
        return cls(
            property=data["property"],
            op=data["op"],
            clause=data["clause"],
            findings=tuple(data["findings"]),
            params=data["params"],
            observed=data["observed"],
            target_failure=data["targetFailure"],
            worker=data["worker"],
            found_at=data["foundAt"],
            examples_until_failure=data["examplesUntilFailure"],
            fixture=data.get("fixture"),
            steps=tuple(data.get("steps", ())),
            shrunk=data.get("shrunk", True),
            kind=data.get("kind", ""),
        )


@attrs.frozen
class PropertyStats:
    id: str
    op: str
    clause: str
    summary: str
    examples: int = 0
    #: Distinct events (Hypothesis ``event()`` / observability features) and how often each was seen.
    events: Mapping[str, int] = attrs.field(factory=dict)
    #: Distinct failing kinds met by this property.
    failures: int = 0
    #: ``"skipped"`` with a reason when the target lacks an op the property requires.
    skipped: str | None = None

    @property
    def status(self) -> str:
        if self.skipped is not None:
            return "skipped"
        return "failed" if self.failures else "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "op": self.op,
            "clause": self.clause,
            "summary": self.summary,
            "examples": self.examples,
            "distinctEvents": len(self.events),
            "events": dict(sorted(self.events.items())),
            "failures": self.failures,
            "status": self.status,
            "skipped": self.skipped,
        }


@attrs.frozen
class CampaignResult:
    target: Mapping[str, Any]
    policies: Mapping[str, str]
    database: str
    workers: int
    seed: int
    started: str
    finished: str
    duration: float
    #: ``time-limit``, ``max-examples``, ``interrupted`` or ``exhausted`` (every property failed).
    stopped: str
    properties: tuple[PropertyStats, ...]
    failures: tuple[FailureRecord, ...]
    #: ``(seconds, examples so far, failures so far)``, sampled through the run.
    timeline: tuple[tuple[float, int, int], ...]
    versions: Mapping[str, str]
    exit_code: int
    #: The name of the Redis campaign this report is of (every machine that joined it), if any.
    campaign: str | None = None
    #: The machines of a Redis campaign: host, pid, workers, seed, started, finished, stopped.
    machines: tuple[Mapping[str, Any], ...] = ()

    @property
    def examples(self) -> int:
        return sum(p.examples for p in self.properties)

    @property
    def events(self) -> dict[str, int]:
        merged: dict[str, int] = {}
        for prop in self.properties:
            for name, count in prop.events.items():
                merged[name] = merged.get(name, 0) + count
        return dict(sorted(merged.items()))

    @property
    def rate(self) -> float:
        return self.examples / self.duration if self.duration > 0 else 0.0

    def kinds_by_property(self) -> dict[str, list[str]]:
        """Each failing property's kinds, in the order found: the summary ``check`` prints."""
        out: dict[str, list[str]] = {}
        for record in self.failures:
            out.setdefault(record.property, []).append(record.key)
        return out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": SCHEMA,
            "target": dict(self.target),
            "policies": dict(self.policies),
            "database": self.database,
            "workers": self.workers,
            "seed": self.seed,
            "started": self.started,
            "finished": self.finished,
            "durationSeconds": round(self.duration, 3),
            "stopped": self.stopped,
            "exitCode": self.exit_code,
            "versions": dict(self.versions),
            "totals": {
                "examples": self.examples,
                "examplesPerSecond": round(self.rate, 2),
                "failures": len(self.failures),
                "distinctEvents": len(self.events),
                "properties": len(self.properties),
            },
            "timeline": [[round(t, 3), n, f] for t, n, f in self.timeline],
            "events": self.events,
            "properties": [p.to_json() for p in self.properties],
            "failures": [f.to_json() for f in self.failures],
        }
        if self.campaign is not None:
            data["campaign"] = self.campaign
            data["machines"] = [dict(m) for m in self.machines]
        return data
