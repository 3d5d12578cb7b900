"""One campaign kept in Redis, so that any number of machines can join it by name.

Every machine runs its own coordinator and workers as a local campaign does; what they find is kept
under the campaign's name the moment it is met, so a machine that dies loses nothing the others can
read, and ``ctxmodel fuzz report --campaign NAME`` renders one report of all of them:

- ``kinds``: one field per kind (``results.finding_key``), its record and its fixture's JSON together,
  written with ``HSETNX``: the first machine to meet a kind claims it, atomically, and every other one
  learns that it is known (met, noted, neither raised nor shrunk again);
- ``examples`` and ``events:<unit>``: counters (``HINCRBY``), so the report's examples, events and
  cells reached are the sum over every machine;
- ``meta`` (the target, its policies, when the campaign started), ``units`` (the properties some
  machine ran), ``errors``, ``timeline`` (examples and kinds over time) and ``machines`` (one entry per
  run that joined, with its own seed and why it stopped).

The keys live until deleted (they are the campaign's memory, not a cache): ``clear`` removes them.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxmodel.errors import UsageError
from ctxmodel.fuzz.database import describe_database, is_redis
from ctxmodel.fuzz.ledger import iso
from ctxmodel.fuzz.results import CampaignResult, FailureRecord, PropertyStats
from ctxmodel.results import verdict_code

__all__ = ["KEY_PREFIX", "SharedCampaign", "check_name", "load_result", "write_fixtures"]

KEY_PREFIX = "ctxmodel-campaign:"
#: Seconds per timeline sample kept in Redis (the latest sample of each bucket is kept).
TIMELINE_BUCKET = 5.0


def check_name(name: str, database: str) -> None:
    """A campaign name is a plain word, and a campaign needs a database every machine reaches."""
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise UsageError(f"--campaign {name!r}: expected letters, digits, '-', '_' or '.'")
    if not is_redis(database):
        raise UsageError(f"--campaign {name}: needs --db redis://host:port/N (the machines share it)")


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class SharedCampaign:
    """The campaign ``name`` in the Redis server ``url``; every method is one round trip or a
    pipeline, so a coordinator can call them as its messages arrive."""

    def __init__(self, url: str, name: str) -> None:
        import redis

        check_name(name, url)
        self.url = url
        self.name = name
        self.client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
        self.prefix = f"{KEY_PREFIX}{name}:"
        self.run_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.started_wall = 0.0

    def key(self, part: str) -> str:
        return self.prefix + part

    # -- joining -------------------------------------------------------------------------------

    def join(
        self,
        target: Mapping[str, Any],
        policies: Mapping[str, str],
        units: Sequence[Mapping[str, Any]],
        machine: Mapping[str, Any],
        started_wall: float,
    ) -> None:
        """Join (or start) the campaign: the first machine sets its target and policies; a machine
        with another target or other policies is refused (its kinds would not be the campaign's)."""
        meta = self.key("meta")
        pipe = self.client.pipeline()
        pipe.hsetnx(meta, "target", json.dumps(dict(target), sort_keys=True))
        pipe.hsetnx(meta, "policies", json.dumps(dict(policies), sort_keys=True))
        pipe.hsetnx(meta, "startedWall", repr(started_wall))
        pipe.hmget(meta, ["target", "policies", "startedWall"])
        *_, (stored_target, stored_policies, stored_started) = pipe.execute()
        theirs = json.loads(stored_target)
        mine = dict(target)
        same = ("name", "version", "tokenizer")
        if any(theirs.get(k) != mine.get(k) for k in same):
            raise UsageError(
                f"--campaign {self.name}: is a campaign on {theirs.get('name')} {theirs.get('version')}, "
                f"not {mine.get('name')} {mine.get('version')}"
            )
        if json.loads(stored_policies) != dict(policies):
            raise UsageError(
                f"--campaign {self.name}: runs with policies {json.loads(stored_policies)}, not {dict(policies)}"
            )
        self.started_wall = min(float(stored_started), started_wall)
        pipe = self.client.pipeline()
        for unit in units:
            pipe.hsetnx(self.key("units"), str(unit["id"]), json.dumps(dict(unit), sort_keys=True))
        pipe.hset(self.key("machines"), self.run_id, json.dumps(dict(machine), sort_keys=True))
        pipe.execute()

    def machine_done(self, machine: Mapping[str, Any]) -> None:
        self.client.hset(self.key("machines"), self.run_id, json.dumps(dict(machine), sort_keys=True))

    # -- what the machines find ----------------------------------------------------------------

    def claim(self, record: FailureRecord, fixture: Mapping[str, Any] | None) -> bool:
        """Keep a kind with its fixture, unless a machine kept it first (``HSETNX``: one winner)."""
        value = json.dumps({"record": record.to_json(), "fixture": fixture}, ensure_ascii=False, allow_nan=False)
        return bool(self.client.hsetnx(self.key("kinds"), record.key, value))

    def known(self) -> set[str]:
        return {_text(k) for k in self.client.hkeys(self.key("kinds"))}

    def add_stats(self, unit: str, examples: int, events: Mapping[str, int]) -> None:
        pipe = self.client.pipeline(transaction=False)
        if examples:
            pipe.hincrby(self.key("examples"), unit, examples)
        for name, count in events.items():
            pipe.hincrby(self.key(f"events:{unit}"), name, count)
        pipe.execute()

    def add_error(self, unit: str, text: str) -> None:
        self.client.hsetnx(self.key("errors"), unit, text)

    def sample(self, wall: float) -> None:
        """One point of the campaign's timeline: its examples and kinds so far, by all machines."""
        t = max(0.0, wall - self.started_wall)
        pipe = self.client.pipeline(transaction=False)
        pipe.hvals(self.key("examples"))
        pipe.hlen(self.key("kinds"))
        counts, kinds = pipe.execute()
        point = [round(t, 3), sum(int(c) for c in counts), int(kinds)]
        self.client.hset(self.key("timeline"), str(int(t // TIMELINE_BUCKET)), json.dumps(point))

    def exists(self) -> bool:
        return bool(self.client.exists(self.key("meta")))

    def clear(self) -> int:
        """Delete every key of the campaign; how many there were."""
        keys = list(self.client.scan_iter(match=self.prefix + "*"))
        return int(self.client.delete(*keys)) if keys else 0

    # -- reading it back -----------------------------------------------------------------------

    def kinds(self) -> list[tuple[FailureRecord, dict[str, Any] | None]]:
        """Every kind kept, with its fixture's JSON, in the order found."""
        out = []
        for value in self.client.hvals(self.key("kinds")):
            data = json.loads(value)
            out.append((FailureRecord.from_json(data["record"]), data["fixture"]))
        return sorted(out, key=lambda rf: (rf[0].found_at, rf[0].key))

    def result(self, now: float) -> CampaignResult:
        """The one report of every machine that joined: the kinds, examples and events they kept."""
        import hypothesis

        import ctxmodel

        client = self.client
        meta = {_text(k): _text(v) for k, v in client.hgetall(self.key("meta")).items()}
        if not meta:
            raise UsageError(f"--campaign {self.name}: no such campaign in {self.url}")
        started = float(meta["startedWall"])
        units = sorted(
            (json.loads(v) for v in client.hvals(self.key("units"))), key=lambda u: (u["id"] == "agent-loop", u["id"])
        )
        examples = {_text(k): int(v) for k, v in client.hgetall(self.key("examples")).items()}
        errors = {_text(k): _text(v) for k, v in client.hgetall(self.key("errors")).items()}
        machines = sorted(
            (json.loads(v) for v in client.hvals(self.key("machines"))), key=lambda m: str(m.get("started", ""))
        )
        kinds = [record for record, _ in self.kinds()]
        per_unit: dict[str, int] = {}
        for record in kinds:
            per_unit[record.property] = per_unit.get(record.property, 0) + 1
        props = []
        for unit in units:
            uid = unit["id"]
            events = {_text(k): int(v) for k, v in client.hgetall(self.key(f"events:{uid}")).items()}
            props.append(
                PropertyStats(
                    id=uid,
                    op=unit["op"],
                    clause=unit["clause"],
                    summary=unit["summary"],
                    examples=examples.get(uid, 0),
                    events=events,
                    failures=per_unit.get(uid, 0),
                    skipped=unit.get("skipped") or errors.get(uid),
                )
            )
        timeline = sorted(tuple(json.loads(v)) for v in client.hvals(self.key("timeline")))
        finished = [float(m["finishedWall"]) for m in machines if m.get("finishedWall") is not None]
        running = any(m.get("finishedWall") is None for m in machines)
        end = now if running or not finished else max(finished)
        duration = max(end - started, 1e-9)
        stops = sorted({str(m.get("stopped", "running")) for m in machines}) or ["running"]
        ran = [unit["id"] for unit in units if not unit.get("skipped")]
        code = verdict_code(failed=bool(kinds), unrunnable=bool(errors),
                            judged_nothing=bool(ran) and not any(examples.get(uid, 0) for uid in ran))
        return CampaignResult(
            target=json.loads(meta["target"]),
            policies=json.loads(meta["policies"]),
            database=describe_database(self.url),
            workers=sum(int(m.get("workers", 0)) for m in machines),
            seed=int(machines[0]["seed"]) if machines else 0,
            started=iso(started),
            finished=iso(end),
            duration=duration,
            stopped=", ".join(stops),
            properties=tuple(props),
            failures=tuple(kinds),
            timeline=(*timeline, (duration, sum(examples.values()), len(kinds))),
            versions={
                "ctxmodel": ctxmodel.__version__,
                "hypothesis": hypothesis.__version__,
                "python": __import__("sys").version.split()[0],
            },
            exit_code=code,
            campaign=self.name,
            machines=tuple(machines),
        )


def write_fixtures(campaign: SharedCampaign, directory: str | Path) -> dict[str, str]:
    """Every kind's fixture, as the machine that met it wrote it, into ``directory``: kind -> path."""
    from ctxmodel.fixtures import fixture_name, write_atomic

    out: dict[str, str] = {}
    for record, fixture in campaign.kinds():
        if fixture is None:
            continue
        if record.fixture:
            name = Path(record.fixture).name
        else:
            name = fixture_name(record.key.replace("/", "."), record.params)
        out[record.key] = str(write_atomic(Path(directory) / name, fixture))
    return out


def load_result(campaign: SharedCampaign, fixtures_dir: str | Path | None, now: float) -> CampaignResult:
    """The campaign's report; with ``fixtures_dir``, its fixtures written there and named by it."""
    import attrs

    result = campaign.result(now)
    written = write_fixtures(campaign, fixtures_dir) if fixtures_dir is not None else {}
    failures = tuple(attrs.evolve(r, fixture=written.get(r.key)) for r in result.failures)
    return attrs.evolve(result, failures=failures)
