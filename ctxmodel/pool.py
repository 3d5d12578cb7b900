"""The engine's worker processes, as every scheduler over them starts, stops and salvages them.

``check --jobs N`` (``ctxmodel.parallel``) and a fuzz campaign (``ctxmodel.fuzz.campaign``) hand
tasks to the same workers (``ctxmodel.parallel_worker``) and differ only in what they hand out and
when. What a worker that ended in the middle of a task leaves behind (the unshrunk fixture of each
kind it met, written the moment it met it) is kept here the same way for both: nothing found is
lost to a crash, a kill or a stop.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.fixtures import write_atomic
from ctxmodel.parallel_worker import Setup, worker_main

__all__ = ["Worker", "kept_note", "salvage", "start_worker", "stop_workers"]


@attrs.define
class Worker:
    proc: Any
    conn: Connection
    #: The index of the task it runs, or ``None`` when idle.
    busy: int | None = None
    #: The scratch directory of the task it runs, where its unshrunk fixtures are until it ends.
    scratch: Path | None = None


def start_worker(context: Any, setup: Setup, stop: Any = None) -> Worker:
    """One worker process opening ``setup.spec``; ``stop`` (a multiprocessing ``Event``) is what a
    campaign sets to end every worker's search at once, shrinking what each has met."""
    parent_end, child_end = context.Pipe()
    proc = context.Process(target=worker_main, args=(child_end, setup, stop), name="ctxmodel-job", daemon=True)
    # A worker inherits SIGINT ignored: Ctrl-C reaches the whole process group, and the parent alone
    # decides what an interrupt does (it stops the workers and reports what was kept).
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to protect
        proc.start()
    else:
        try:
            proc.start()
        finally:
            signal.signal(signal.SIGINT, previous)
    child_end.close()
    return Worker(proc, parent_end)


def stop_workers(workers: Sequence[Worker]) -> None:
    """Idle workers are told to leave; busy ones get SIGTERM (they close their target and exit)."""
    for worker in workers:
        try:
            if worker.busy is None:
                worker.conn.send(None)
            else:
                worker.proc.terminate()
        except (OSError, ValueError):
            pass
    for worker in workers:
        worker.proc.join(timeout=10)
        if worker.proc.is_alive():
            worker.proc.kill()
            worker.proc.join(timeout=5)
        worker.conn.close()


def salvage(worker: Worker, fixtures_dir: Path) -> list[Path]:
    """Keep the fixtures a worker that ended in the middle of a task had written (each kind's
    unshrunk first example, written as it was met), then remove its scratch directory."""
    kept: list[Path] = []
    scratch, worker.scratch = worker.scratch, None
    if scratch is None:
        return kept
    for path in sorted(scratch.glob("*.json")):
        try:
            kept.append(write_atomic(fixtures_dir / path.name, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue  # one the worker was still writing when it ended, or a disk that refuses it
    shutil.rmtree(scratch, ignore_errors=True)
    return kept


def kept_note(kept: Sequence[Path]) -> str:
    return f"; its unshrunk fixtures kept: {', '.join(str(p) for p in kept)}" if kept else ""
