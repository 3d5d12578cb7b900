"""The live progress display: one refreshed block on a terminal, plain lines otherwise (CI logs).

Plain text on purpose (no ``rich``): a campaign's log is read in CI artifacts and over ssh, where
cursor tricks turn into noise; on a TTY we only redraw our own few lines.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TextIO

from ctxmodel.fuzz.results import CampaignResult, FailureRecord

__all__ = ["Progress"]

#: Seconds between plain status lines when the output is not a terminal.
PLAIN_EVERY = 5.0


class Progress:
    def __init__(self, stream: TextIO, *, tty: bool) -> None:
        self.stream = stream
        self.tty = tty
        self._drawn = 0
        self._last_plain = 0.0

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
            f"FAILED {record.property} ({record.clause}) — worker {record.worker}, "
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
            f"{len(result.failures)} failures, {len(result.events)} distinct events"
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
        lines = [self._status(result), f"  {'property':<{width}}  {'examples':>8}  {'events':>6}  failures"]
        for prop in result.properties:
            if prop.skipped is not None:
                continue
            lines.append(f"  {prop.id:<{width}}  {prop.examples:>8}  {len(prop.events):>6}  {prop.failures}")
        self._write("\n".join(lines) + "\n")
        self._drawn = len(lines)

    def finish(self, result: CampaignResult, report_dir: str | None) -> None:
        self._clear()
        lines = [f"stopped ({result.stopped}): " + self._status(result).split("] ", 1)[1]]
        for prop in result.properties:
            if prop.skipped is not None:
                lines.append(f"  {prop.id}: skipped ({prop.skipped})")
        for record in result.failures:
            where = f" -> {record.fixture}" if record.fixture else ""
            lines.append(f"  FAILED {record.property}{where}")
            if record.fixture:
                spec = result.target.get("spec", "reference")
                lines.append(f"    Reproduce with: ctxmodel replay {record.fixture} --target '{spec}'")
        if report_dir:
            lines.append(f"report: {report_dir}/report.html ({report_dir}/report.json)")
        lines.append(f"seed {result.seed}")
        self._write("\n".join(lines) + "\n")
