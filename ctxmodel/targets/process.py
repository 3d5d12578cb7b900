"""``exec:COMMAND`` targets: one long-lived child speaking JSON lines (contract §7).

The runner must never hang and never be taken down by the target: every request has a deadline,
enforced by a watchdog thread that kills the child's process group when it passes (which ends
any blocked read or write with EOF or a broken pipe), replies are read in chunks up to a cap, stderr is
drained by a thread into a bounded tail (a chatty target can never fill its stderr pipe and
stall), and a child that crashed, hung or broke the protocol is killed with its whole process
group and started afresh for the next call, so one bad input costs one failure, not the run.
Plain blocking reads and writes, not ``poll`` on non-blocking pipes: waking from ``poll`` and then
reading costs a second scheduler round trip per request, which doubled the cost of small requests
(benchmarks/bench_gate.py).
Each failure is raised as ``TargetFailure`` from the call whose input caused it (contract §7:
"both are failures reported with the input that caused them").
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from typing import IO, Any, NoReturn

from ctxmodel.errors import UsageError
from ctxmodel.targets.base import DEFAULT_OPS, Description, FailureKind, TargetFailure
from ctxmodel.targets.handshake import parse_description

__all__ = ["DEFAULT_MAX_REPLY", "DEFAULT_TIMEOUT", "ProcessTarget", "command_argv"]

DEFAULT_TIMEOUT = 10.0
#: Seconds a child process gets to start and answer its first request (``start_allowance``).
START_ALLOWANCE = 60.0
#: A reply larger than this is refused (and the child killed) instead of exhausting our memory.
DEFAULT_MAX_REPLY = 32 * 1024 * 1024
#: Below malloc's mmap threshold: a 1 MB read buffer cost an mmap and page faults per request.
_CHUNK = 1 << 16
_STDERR_TAIL = 4096
_TICK = 0.02
_SHELL_CHARS = set("|&;<>()$`*?[]{}~!\n\\")


def command_argv(command: str) -> list[str]:
    """A plain command is split like a shell would; one with shell syntax is given to ``sh -c``."""
    if not command.strip():
        raise UsageError("exec: expected a command, got nothing")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"exec:{command}: {exc}") from None
    if any(ch in _SHELL_CHARS for ch in command):
        return ["sh", "-c", command]
    return argv


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not strict JSON")


#: One strict decoder for every reply (building one per call costs more than parsing a short reply).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _shown(raw: bytes) -> str:
    return raw[:120].decode("utf-8", "replace") + ("…" if len(raw) > 120 else "")


class _Watchdog:
    """Kills a child whose request outlived its deadline. The calling thread only stores a deadline
    (no lock, no wake-up), and the watchdog looks every few hundredths of a second, so the fast
    path costs two attribute writes; a timeout fires at most ``_TICK`` late."""

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.pid: int | None = None
        self.fired = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def arm(self, pid: int, deadline: float) -> None:
        self.fired = False
        self.pid = pid
        self.deadline = deadline

    def disarm(self) -> None:
        self.deadline = None

    def _watch(self) -> None:
        while not self._stop.wait(_TICK):
            deadline, pid = self.deadline, self.pid
            if deadline is not None and pid is not None and time.monotonic() >= deadline:
                self.fired = True
                self.deadline = None
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()


class _StderrTail:
    """Drains a child's stderr forever, keeping only the last few kilobytes."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
                with self._lock:
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    while self._size - len(self._chunks[0]) >= _STDERR_TAIL:
                        self._size -= len(self._chunks.popleft())
        except (OSError, ValueError):
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def tail(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)[-_STDERR_TAIL:]
        lines = data.decode("utf-8", "replace").strip().splitlines()
        return " | ".join(line.strip() for line in lines[-3:] if line.strip())[-400:]


class ProcessTarget:
    """An ``exec:COMMAND`` target. ``argv``/``env``/``label`` let another transport reuse the
    machinery with a child of its own (``python:`` targets run in ``_pyworker``)."""

    def __init__(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_reply: int = DEFAULT_MAX_REPLY,
        argv: list[str] | None = None,
        env: dict[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        if timeout <= 0:
            raise UsageError(f"--timeout {timeout}: expected a positive number of seconds")
        self.command = command
        self.argv = argv if argv is not None else command_argv(command)
        self.env = env
        self.label = label if label is not None else f"exec:{command}"
        self.timeout = timeout
        #: Extra seconds before the watchdog kills (a child that enforces ``timeout`` itself).
        self.grace = 0.0
        self.max_reply = max_reply
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: _StderrTail | None = None
        self._buf = bytearray()
        self._watchdog = _Watchdog()
        self._next_id = 0
        self._started_once = False
        started = time.monotonic()
        self.description = self._handshake()
        #: Seconds the first start and handshake took: what a restart after a kill costs the request
        #: that follows it, which a timeout being shrunk must not count against the input.
        self.startup_seconds = time.monotonic() - started

    # -- lifecycle ---------------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                bufsize=0,
                env=self.env,
            )
        except OSError as exc:
            raise TargetFailure("start", f"{self.label}: cannot start: {exc.strerror or exc}") from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._stderr = _StderrTail(proc.stderr)
        if self._watchdog.stopped:  # closed earlier and used again
            self._watchdog = _Watchdog()
        self._buf = bytearray()
        self._proc = proc
        if self._started_once:
            self.restarts += 1
        self._started_once = True
        return proc

    def _handshake(self) -> Description:
        """Start the child and ask ``describe``; anything but an answer (or a plain "no such op")
        means the target cannot be driven at all (contract §9 exit 3)."""
        try:
            reply = self._result(self._exchange("describe", {}, timeout=self.start_allowance), "describe")
        except TargetFailure as exc:
            if exc.kind == "error-reply":
                # No describe: the contract's defaults, and every op offered (contract §7).
                return Description(name=self.argv[-1], version="", ops=DEFAULT_OPS)
            self.close()
            if exc.kind == "start":
                raise
            raise TargetFailure("start", f"{self.label}: {exc}") from None
        try:
            return parse_description(reply, self.argv[-1])
        except TargetFailure:
            self.close()
            raise

    def _kill(self) -> int | None:
        """Kill the child and everything it started; return its exit code when known."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        code = proc.poll()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail on Linux
            pass
        if self._stderr is not None:
            self._stderr.join(1.0)
        if proc.stderr is not None:
            proc.stderr.close()
        return code if code is not None else proc.returncode

    def close(self) -> None:
        self._watchdog.stop()
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            # EOF on stdin is the polite way to end a JSON-lines server; give it a moment.
            try:
                proc.stdin.close()
                proc.wait(timeout=0.2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def __enter__(self) -> ProcessTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request -------------------------------------------------------------------------

    def _fail(self, kind: Any, op: str, message: str, *, kill: bool = True) -> NoReturn:
        code = self._kill() if kill else None
        tail = self._stderr.tail() if self._stderr is not None else ""
        parts = [f"{op}: {message}"]
        if code is not None and kind == "crash":
            parts[0] += f" (exit code {code})" if code >= 0 else f" (killed by signal {-code})"
        if tail:
            parts.append(f"stderr: {tail}")
        raise TargetFailure(kind, "; ".join(parts))

    #: Whether a restarted child is asked ``describe`` before the request that needed it.
    settles_on_restart = True

    @property
    def start_allowance(self) -> float:
        """Seconds a child gets to start and answer its first request: more than a request's timeout,
        since loading an agent's bundle or a library (LiteLLM: 11 s on a busy machine) is no answer
        to any input."""
        return max(START_ALLOWANCE, self.timeout)

    def _settle(self) -> None:
        """Let a restarted child load before the next input's deadline starts: a restart after a
        crash or a kill must not be charged to the input that follows it (a load-dependent timeout)."""
        try:
            self._exchange("describe", {}, timeout=self.start_allowance)
        except TargetFailure:
            pass  # the request that follows meets whatever is wrong, and reports it

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        return self._result(self._exchange(op, params), op)

    def _exchange(self, op: str, params: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Send one request and read its reply object (its ``id`` checked), or fail."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            if proc is not None:
                self._kill()
            restart = self._started_once
            proc = self._start()
            if restart and self.settles_on_restart and op != "describe":
                self._settle()
                proc = self._proc if self._proc is not None else self._start()
        self._next_id += 1
        request_id = self._next_id
        try:
            line = json.dumps({"id": request_id, "op": op, "params": params}, allow_nan=False).encode() + b"\n"
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{op}: params are not strict JSON: {exc}") from None
        seconds = self.timeout if timeout is None else timeout
        self._watchdog.arm(proc.pid, time.monotonic() + seconds + self.grace)
        try:
            self._write(proc, line, op, seconds)
            raw = self._read_line(proc, op, seconds)
        finally:
            self._watchdog.disarm()
        return self._parse(raw, request_id, op)

    def _error_kind(self, error: dict[str, Any]) -> FailureKind:
        """The kind of an error reply: always ``error-reply`` for a process (it cannot claim more)."""
        return "error-reply"

    def _result(self, reply: dict[str, Any], op: str) -> dict[str, Any]:
        """The ``result`` of a reply, or its ``error`` raised as a ``TargetFailure``."""
        if "error" in reply and reply["error"] is not None:
            error = reply["error"]
            message = error.get("message") if isinstance(error, dict) else None
            if not isinstance(message, str):
                self._fail("protocol", op, 'error reply without "message" string')
            assert isinstance(error, dict)
            kind = self._error_kind(error)
            raise TargetFailure(kind, message if kind != "error-reply" else f"{op}: {message}")
        result = reply.get("result")
        if not isinstance(result, dict):
            self._fail("protocol", op, 'expected "result" to be an object (or an "error")')
        return result

    def _timed_out(self, op: str, seconds: float) -> NoReturn:
        self._fail("timeout", op, f"no reply within {seconds:g} s (target killed)")

    def _write(self, proc: subprocess.Popen[bytes], data: bytes, op: str, seconds: float) -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                written += os.write(fd, view[written:])
        except (BrokenPipeError, ConnectionResetError):
            if self._watchdog.fired:
                self._timed_out(op, seconds)
            self._fail("crash", op, "the target exited before reading its request")

    def _read_line(self, proc: subprocess.Popen[bytes], op: str, seconds: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = self._buf
        scanned = 0
        while True:
            newline = buf.find(b"\n", scanned)
            if newline >= 0:
                line = bytes(buf[:newline])
                del buf[: newline + 1]
                scanned = 0
                if line.strip():
                    return line
                continue  # blank lines between replies are harmless
            scanned = len(buf)
            if len(buf) > self.max_reply:
                self._fail("protocol", op, f"reply larger than {self.max_reply // (1024 * 1024)} MB (target killed)")
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                if self._watchdog.fired:
                    self._timed_out(op, seconds)
                try:
                    proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    self._fail("crash", op, "the target closed its stdout without replying")
                self._died(op)
            buf += chunk

    def _died(self, op: str) -> NoReturn:
        """The child exited while answering ``op`` (its exit code is added by ``_fail``)."""
        self._fail("crash", op, "the target exited without replying")

    def _parse(self, raw: bytes, request_id: int, op: str) -> dict[str, Any]:
        try:
            reply = _DECODER.decode(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            self._fail("protocol", op, f"the target printed a line that is not JSON: {_shown(raw)!r}")
        if not isinstance(reply, dict):
            self._fail("protocol", op, f"expected a reply object, got {_shown(raw)!r}")
        got = reply.get("id")
        if isinstance(got, bool) or got != request_id:
            self._fail("protocol", op, f"reply has id {got!r}, expected {request_id}")
        return reply
