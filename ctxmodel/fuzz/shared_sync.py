"""This machine's side of a campaign kept in Redis (``ctxmodel.fuzz.shared_campaign``), as a handler
of the campaign's events: its counts and errors added there as they come, a timeline point and a
look at the kinds other machines claimed at every tick, and each kind it met claimed there before
it is kept here (``claim``, which the scheduler asks: a kind another machine claimed first is not
this machine's to report).

A Redis that does not answer is said once and tried again at the next tick; a kind kept while it
could not be reached is claimed there when it answers again. Nothing found is lost to Redis.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.errors import UsageError
from ctxmodel.events import Emitter, Event
from ctxmodel.fuzz.events import CampaignNote, CampaignStarted, CampaignTick, SliceTallied, UnitFailed
from ctxmodel.fuzz.ledger import Ledger
from ctxmodel.fuzz.results import CampaignResult, FailureRecord
from ctxmodel.fuzz.shared_campaign import SharedCampaign, load_result

__all__ = ["SharedSync"]

#: Seconds between two looks at the kinds other machines of the campaign claimed.
POLL_EVERY = 1.0


class SharedSync:
    handles = frozenset({CampaignStarted, SliceTallied, UnitFailed, CampaignTick})

    def __init__(self, shared: SharedCampaign, ledger: Ledger, emit: Emitter, fixtures_dir: str | Path) -> None:
        self.shared = shared
        self.ledger = ledger
        self.emit = emit
        self.fixtures_dir = fixtures_dir
        #: Kinds kept here while Redis could not be reached: claimed there when it answers again.
        self.unclaimed: list[tuple[FailureRecord, dict[str, Any] | None]] = []
        self.next_poll = 0.0
        #: Where a ``found_at`` of this machine falls on the campaign's clock (the first machine's start).
        self.offset = ledger.started_wall - shared.started_wall

    @classmethod
    def join(cls, database: str, name: str, ledger: Ledger, emit: Emitter, fixtures_dir: str | Path) -> SharedSync:
        """Join the campaign ``name``: this run's units and itself as one more machine; the kinds it
        already holds are known to this run's slices from the first one."""
        import redis

        shared = SharedCampaign(database, name)
        specs = [attrs.asdict(u) for u in ledger.units]
        try:
            shared.join(ledger.target_info, ledger.policies, specs, ledger.machine(), ledger.started_wall)
            ledger.known.update(shared.known())
        except redis.RedisError as exc:
            raise UsageError(f"--campaign {name}: {exc}") from None
        return cls(shared, ledger, emit, fixtures_dir)

    def _call(self, call: Callable[[], Any]) -> Any:
        import redis

        try:
            return call()
        except redis.RedisError as exc:
            self.emit(CampaignNote(f"campaign {self.shared.name}: Redis did not answer ({exc})"))
            return None

    def claim(self, record: FailureRecord, fixture: dict[str, Any] | None) -> bool:
        kept = attrs.evolve(record, found_at=record.found_at + self.offset)
        won = self._call(lambda: self.shared.claim(kept, fixture))
        if won is None:
            self.unclaimed.append((kept, fixture))
        return won is not False

    def handle(self, event: Event) -> None:
        shared = self.shared
        if isinstance(event, CampaignStarted):
            self.emit(CampaignNote(f"campaign {shared.name} ({shared.url}): {len(self.ledger.known)} kinds known"))
        elif isinstance(event, SliceTallied):
            self._call(lambda: shared.add_stats(event.unit, event.examples, event.labels))
        elif isinstance(event, UnitFailed):
            self._call(lambda: shared.add_error(event.unit, event.text))
        elif isinstance(event, CampaignTick) and time.monotonic() >= self.next_poll:
            self.next_poll = time.monotonic() + POLL_EVERY
            self.sync(event.wall)

    def sync(self, wall: float, *, final: bool = False) -> None:
        """Kinds kept while Redis was unreachable are claimed, kinds other machines claimed become
        known here, one timeline point is kept (and, at the end, why this machine stopped)."""
        import redis

        ledger = self.ledger
        try:
            while self.unclaimed:
                record, fixture = self.unclaimed[0]
                self.shared.claim(record, fixture)
                self.unclaimed.pop(0)
            theirs = self.shared.known() - ledger.known
            if theirs:
                ledger.known.update(theirs)
                for key in sorted(theirs):
                    self.emit(CampaignNote(f"met by another machine: {key}"))
            self.shared.sample(wall)
            if final:
                self.shared.machine_done(ledger.machine(finished=wall))
            ledger.fatal = [f for f in ledger.fatal if not f.startswith("redis: ")]
        except redis.RedisError as exc:
            text = f"redis: {exc}"
            if text not in ledger.fatal:
                ledger.fatal.append(text)
                self.emit(CampaignNote(f"campaign {self.shared.name}: Redis did not answer ({exc}); "
                                       "what is found is kept here"))

    def result(self, now: float) -> CampaignResult:
        """Every machine's campaign (this run's own result when Redis cannot be read)."""
        import redis

        try:
            return load_result(self.shared, self.fixtures_dir, now)
        except redis.RedisError:
            return self.ledger.result(now)
