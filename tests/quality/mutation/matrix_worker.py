"""Kill-matrix worker: run every covering property against each given mutant, one forked child per mutant.

Started by ``tests/quality/mutation/run.py`` as a fresh interpreter inside mutmut's ``mutants/`` directory,
so ``ctxmodel`` is imported from the mutated copy (every function behind mutmut's trampoline, which
reads ``MUTANT_UNDER_TEST`` on each call). Each mutant runs in a forked child with a deadline, so a
mutant that loops for ever costs its timeout and nothing else. Writes one JSON line per mutant:
``{"mutant", "killed_by": [...], "passed": [...], "timeout": bool}``.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import sys
import time
from typing import TYPE_CHECKING


def _child(mutant: str, props: list[str], write_fd: int) -> None:
    os.environ["MUTANT_UNDER_TEST"] = mutant
    if TYPE_CHECKING:  # kill.py is copied into mutmut's tests/ as test_kill.py
        from tests.quality.mutation.kill import killed as kills
        from tests.quality.mutation.kill import run_one
    else:
        from test_kill import killed as kills
        from test_kill import run_one

    killed: list[str] = []
    passed: list[str] = []
    for prop in props:
        try:
            outcome = run_one(prop)
            (killed if kills(outcome) else passed).append(prop)
        except BaseException:  # a mutant that breaks the harness itself still fails the property
            killed.append(prop)
        os.write(write_fd, (json.dumps({"prop": prop, "killed": prop in killed}) + "\n").encode())
    os.close(write_fd)
    os._exit(0)


def run(mutant: str, props: list[str], timeout: float) -> dict[str, object]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(mutant, props, write_fd)
    os.close(write_fd)
    deadline = time.monotonic() + timeout
    buffer = b""
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, 9)
            break
        ready, _, _ = select.select([read_fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            buffer += chunk
    os.close(read_fd)
    os.waitpid(pid, 0)
    lines = [json.loads(line) for line in buffer.decode().splitlines() if line.strip()]
    killed = [r["prop"] for r in lines if r["killed"]]
    passed = [r["prop"] for r in lines if not r["killed"]]
    return {"mutant": mutant, "killed_by": killed, "passed": passed, "timeout": timed_out}


def main() -> int:
    jobs_file, out_file, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    sys.path.insert(0, os.getcwd())
    sys.path.insert(1, os.path.join(os.getcwd(), "tests"))
    # Import the mutated modules once, before forking, so each child starts warm.
    importlib.import_module("ctxmodel.normalize")
    importlib.import_module("ctxmodel.recover")
    importlib.import_module("ctxmodel.visibility")
    importlib.import_module("test_kill")

    with open(jobs_file, encoding="utf-8") as jobs, open(out_file, "a", encoding="utf-8") as out:
        for line in jobs:
            job = json.loads(line)
            out.write(json.dumps(run(job["mutant"], job["props"], timeout)) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
