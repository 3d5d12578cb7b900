"""The live progress display: one refreshed block on a terminal, plain lines otherwise (CI logs).

Plain text on purpose (no ``rich``): a campaign's log is read in CI artifacts and over ssh, where
cursor tricks turn into noise; on a TTY we only redraw our own few lines.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TextIO

from ctxmodel.events import Event
from ctxmodel.fuzz.events import CampaignFinished, CampaignNote, CampaignStarted, CampaignTick, KindKept
from ctxmodel.fuzz.results import CampaignResult, FailureRecord

__all__ = ["Progress", "summary"]

#: Seconds between plain status lines when the output is not a terminal.
PLAIN_EVERY = 5.0


class Progress:
    """A handler of the campaign's events (``ctxmodel.fuzz.events``)."""

    handles = frozenset({CampaignStarted, CampaignNote, KindKept, CampaignTick, CampaignFinished})

    def __init__(self, stream: TextIO, *, tty: bool, report_dir: str | None = None) -> None:
        self.stream = stream
        self.tty = tty
        self.report_dir = report_dir
        self._drawn = 0
        self._last_plain = 0.0

    def handle(self, event: Event) -> None:
        if isinstance(event, CampaignStarted):
            ledger = event.ledger
            self.start(ledger.target_info, len([u for u in ledger.units if u.skipped is None]), ledger.workers,
                       ledger.seed)
        elif isinstance(event, CampaignNote):
            self.note(event.text)
        elif isinstance(event, KindKept):
            self.failure(event.record)
        elif isinstance(event, CampaignTick):
            self.update(event.result)
        elif isinstance(event, CampaignFinished):
            self.finish(event.result, self.report_dir)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self._write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0

    def start(self, target: Mapping[str, Any], units: int, workers: int, seed: int) -> None:
        self._write(
            f"ctxmodel fuzz: {target.get('name')} {target.get('version')} ({target.get('spec')}); "
            f"{units} properties, {workers} workers, seed {seed}\n"
        )

    def note(self, line: str) -> None:
        self._clear()
        self._write(line + "\n")

    def failure(self, record: FailureRecord) -> None:
        self._clear()
        lines = [
            f"FAILED {record.key} ({record.clause}) — worker {record.worker}, "
            f"after {record.examples_until_failure} examples, {record.found_at:.1f} s",
            *(f"  found: {text}" for text in record.findings),
        ]
        if record.fixture:
            lines.append(f"  fixture: {record.fixture}")
        self._write("\n".join(lines) + "\n")

    @staticmethod
    def _status(result: CampaignResult) -> str:
        return (
            f"[{result.duration:7.1f}s] {result.examples} examples ({result.rate:.1f}/s), "
            f"{_kinds(len(result.failures))}, {len(result.events)} distinct events"
        )

    def update(self, result: CampaignResult) -> None:
        if not self.tty:
            now = time.monotonic()
            if now - self._last_plain >= PLAIN_EVERY:
                self._last_plain = now
                self._write(self._status(result) + "\n")
            return
        self._clear()
        width = max([8, *(len(p.id) for p in result.properties)])
        lines = [self._status(result), f"  {'property':<{width}}  {'examples':>8}  {'events':>6}  kinds"]
        for prop in result.properties:
            if prop.skipped is not None:
                continue
            lines.append(f"  {prop.id:<{width}}  {prop.examples:>8}  {len(prop.events):>6}  {prop.failures}")
        self._write("\n".join(lines) + "\n")
        self._drawn = len(lines)

    def finish(self, result: CampaignResult, report_dir: str | None) -> None:
        self._clear()
        self._write(summary(result, report_dir))


def _kinds(n: int) -> str:
    return f"{n} failing kind{'' if n == 1 else 's'}"


def summary(result: CampaignResult, report_dir: str | None) -> str:
    """The end of a campaign as ``ctxmodel check`` reads: each failing kind with its fixture and the
    command that replays it, then one line per property that failed, with its number of kinds."""
    head = f"stopped ({result.stopped}): " + Progress._status(result).split("] ", 1)[1]
    lines = [head if result.campaign is None else f"campaign {result.campaign}, {head}"]
    for machine in result.machines:
        lines.append(
            f"  machine {machine.get('host')}:{machine.get('pid')}: {machine.get('workers')} workers, "
            f"seed {machine.get('seed')}, {machine.get('examples')} examples, {machine.get('stopped')}"
        )
    for prop in result.properties:
        if prop.skipped is not None:
            lines.append(f"  {prop.id}: skipped ({prop.skipped})")
    spec = result.target.get("spec", "reference")
    for record in result.failures:
        where = f" -> {record.fixture}" if record.fixture else ""
        lines.append(f"  FAILED {record.key} ({record.clause}){where}")
        if record.fixture:
            lines.append(f"    Reproduce with: ctxmodel replay {record.fixture} --target '{spec}'")
    for prop_id, kinds in result.kinds_by_property().items():
        lines.append(f"  {prop_id}: FAILED ({len(kinds)} kind{'' if len(kinds) == 1 else 's'})")
    if report_dir:
        lines.append(f"report: {report_dir}/report.html ({report_dir}/report.json)")
    if result.campaign is None:
        lines.append(f"seed {result.seed}")
    return "\n".join(lines) + "\n"
