"""The worker a ``python:`` target runs in: ``python -m ctxmodel.targets._pyworker pkg.module[:object]``.

It speaks the ``exec:`` JSON-lines protocol (contract §7) on the stdin and stdout it was started
with; the target's own ``print`` goes to stderr (file descriptor 1 is pointed there before the
module is imported) and its ``input()`` reads nothing, so nothing a target does can corrupt the
protocol. One request at a time:

- the params are decoded twice, one copy for the op and one kept pristine; after the call a
  difference between them is a mutation of the input (contract §1), reported next to the result
  as ``"mutated": ["messages.2.content", ...]`` (the first few paths) with ``"params"``, the params
  as the op left them (sent only then);
- an exception is an error reply of kind ``exception`` (``Type: message (at file:line)``), a reply
  that is not a JSON object of strict JSON one of kind ``protocol``, and ``SystemExit`` (any code)
  or ``KeyboardInterrupt`` one of kind ``crash`` ("the target exited with status 0 while answering
  normalize"): the worker goes on serving, and the gate never exits with the target's status;
- the request deadline (``CTXMODEL_PYWORKER_TIMEOUT`` seconds) is enforced here too: a ``SIGALRM``
  interrupts an op that runs past it (a Python loop, a ``sleep``) and the reply is an error of kind
  ``timeout``, so a hang costs the timeout and nothing more — no restart, no re-import, no cold
  caches for the next input (a cold start counted against the next request's deadline made
  inputs that do not hang time out);
- the private op ``_ops`` answers which ops the module defines, or (kind ``start``) why it
  could not be imported, which the parent turns into a start error (exit 3); ``_warm`` loads
  ctxmodel's own counters when the target uses ctxmodel (the reference's ``recover`` counts with
  them), so loading ranks is never charged to a request's deadline.

``os._exit``, a segfault, or a hang the alarm cannot interrupt (C code, an op that swallows the
interrupt) end the process: the parent (``PythonWorkerTarget``), whose own deadline is a little
later, reports the exit or the timeout as the failure of that input and starts a fresh worker for
the next call.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType
from typing import IO, Any

#: Paths of a mutation reported per call (the first ones met).
_MAX_PATHS = 5
#: Modules whose presence means the target runs ctxmodel's own code (worth warming its counters).
_USES_CTXMODEL = ("ctxmodel.targets.reference", "ctxmodel.recover", "ctxmodel.tokens", "ctxmodel.normalize")


class _Deadline(BaseException):
    """Raised into an op that ran past the request deadline (a ``BaseException``, so that an
    ``except Exception`` in the target does not swallow it)."""


class _Alarm:
    """A one-shot ``SIGALRM`` per request; it raises only while armed, so a late signal after the
    op returned is harmless. An op that swallows it anyway is killed by the parent."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds if seconds and seconds > 0 and hasattr(signal, "setitimer") else None
        self.armed = False
        if self.seconds is not None:
            signal.signal(signal.SIGALRM, self._ring)

    def _ring(self, signum: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            raise _Deadline

    def arm(self) -> None:
        if self.seconds is not None:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def disarm(self) -> None:
        self.armed = False
        if self.seconds is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """The protocol's pipes, private; fd 0 becomes /dev/null and fd 1 the worker's stderr."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


def _set_path() -> None:
    """``sys.path`` as the parent had it, the working directory first (as an in-process import)."""
    try:
        parent = json.loads(os.environ.get("CTXMODEL_PYWORKER_PATH", "[]"))
    except ValueError:
        parent = []
    entries = [p for p in parent if isinstance(p, str)] if isinstance(parent, list) else []
    seen: set[str] = set()
    path: list[str] = []
    for entry in [os.getcwd(), *entries, *sys.path]:
        if entry not in seen:
            seen.add(entry)
            path.append(entry)
    sys.path[:] = path


def differences(before: Any, after: Any, path: str, out: list[str]) -> None:
    """Append the JSON paths where ``after`` differs from ``before`` (up to ``_MAX_PATHS``)."""
    if len(out) >= _MAX_PATHS:
        return
    if type(before) is not type(after):
        out.append(path)
    elif isinstance(before, dict):
        for key in list(before) + [k for k in after if k not in before]:
            where = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                out.append(where)
            elif before[key] != after[key]:
                differences(before[key], after[key], where, out)
            if len(out) >= _MAX_PATHS:
                return
    elif isinstance(before, list):
        for i, (x, y) in enumerate(zip(before, after, strict=False)):
            if x != y:
                differences(x, y, f"{path}.{i}" if path else str(i), out)
            if len(out) >= _MAX_PATHS:
                return
        if len(before) != len(after):
            n = min(len(before), len(after))
            out.append(f"{path}.{n}" if path else str(n))
    elif before != after:
        out.append(path)


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return 1  # sys.exit("message") exits 1 after printing the message


def _timeout_env() -> float | None:
    try:
        return float(os.environ.get("CTXMODEL_PYWORKER_TIMEOUT", ""))
    except ValueError:
        return None


def warm(tokenizer: object, *, counters: bool = True) -> None:
    """Load what ctxmodel's own ops load lazily, when the target uses them (see the module): the
    reference's modules, and its counters (a second or more of ranks) when the target counts."""
    if not any(name in sys.modules for name in _USES_CTXMODEL):
        return
    try:
        import ctxmodel.normalize
        import ctxmodel.recover
        import ctxmodel.visibility  # noqa: F401

        if not counters:
            return
        from ctxmodel.tokens import get_counter

        get_counter("zoo")  # the reference's recover and count
        if isinstance(tokenizer, str):
            get_counter(tokenizer)
    except Exception:  # warming is an optimisation: a failure shows in the op that needs it
        pass


def serve(spec: str, proto_in: IO[bytes], proto_out: IO[bytes], seconds: float | None = None) -> None:
    from ctxmodel.errors import describe_exception
    from ctxmodel.targets.base import TargetFailure
    from ctxmodel.targets.python import OPS_QUERY, WARM, load_ops

    alarm = _Alarm(seconds)

    ops: dict[str, Any] = {}
    module_name = spec.partition(":")[0]
    start_error: str | None = None
    try:
        module_name, ops = load_ops(spec)
    except TargetFailure as exc:
        start_error = exc.message
    except BaseException as exc:  # SystemExit or worse while importing: still a start error
        start_error = f"python:{spec}: cannot import: {describe_exception(exc)}"

    def send(reply: dict[str, Any]) -> None:
        proto_out.write(json.dumps(reply).encode() + b"\n")
        proto_out.flush()

    for line in proto_in:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            request_id = request["id"]
            op = request["op"]
            params = request.get("params", {})
        except (ValueError, KeyError, TypeError):
            send({"id": None, "error": {"kind": "protocol", "message": "the worker got a request it cannot read"}})
            continue
        if start_error is not None:
            send({"id": request_id, "error": {"kind": "start", "message": start_error}})
            continue
        if op == OPS_QUERY:
            send({"id": request_id, "result": {"module": module_name, "ops": list(ops)}})
            continue
        if op == WARM:
            if isinstance(params, dict):
                warm(params.get("tokenizer"), counters=bool(params.get("counters", True)))
            send({"id": request_id, "result": {}})
            continue
        fn = ops.get(op)
        if fn is None:
            send({"id": request_id, "error": {"kind": "error-reply", "message": f"python:{spec} has no op {op!r}"}})
            continue
        pristine = json.loads(line)["params"] if "params" in request else {}
        reply: dict[str, Any] = {"id": request_id}
        try:
            try:
                alarm.arm()
                reply["result"] = fn(params)
            finally:
                alarm.disarm()
        except _Deadline:
            message = f"{op}: no reply within {alarm.seconds:g} s (interrupted)"
            reply["error"] = {"kind": "timeout", "message": message}
        except SystemExit as exc:
            why = describe_exception(exc)
            message = f"the target exited with status {_exit_status(exc)} while answering {op} ({why})"
            reply["error"] = {"kind": "crash", "message": message}
        except KeyboardInterrupt as exc:
            message = f"the target raised KeyboardInterrupt while answering {op} ({describe_exception(exc)})"
            reply["error"] = {"kind": "crash", "message": message}
        except BaseException as exc:
            reply["error"] = {"kind": "exception", "message": f"{op}: {describe_exception(exc)}"}
        if params != pristine:
            paths: list[str] = []
            differences(pristine, params, "", paths)
            reply["mutated"] = paths or ["params"]
            reply["params"] = params
        if "result" in reply and not isinstance(reply["result"], dict):
            got = type(reply.pop("result")).__name__
            reply["error"] = {"kind": "protocol", "message": f"{op}: expected a JSON object reply, got {got}"}
        proto_out.write(_encode(reply, op))
        proto_out.flush()


def _encode(reply: dict[str, Any], op: str) -> bytes:
    """``reply`` as one line of strict JSON; else without the mutated params (a target may leave
    objects in them), else with its result replaced by a ``protocol`` error naming why."""
    for attempt in range(3):
        try:
            return json.dumps(reply, allow_nan=False).encode() + b"\n"
        except (TypeError, ValueError, RecursionError) as exc:
            if attempt == 0 and "params" in reply:
                reply = {k: v for k, v in reply.items() if k != "params"}
                continue
            reply = {k: v for k, v in reply.items() if k not in ("result", "params")}
            reply["error"] = {"kind": "protocol", "message": f"{op}: reply is not strict JSON: {exc}"}
    return json.dumps({"id": reply.get("id"), "error": reply.get("error")}).encode() + b"\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m ctxmodel.targets._pyworker package.module[:object]\n")
        sys.exit(2)
    proto_in, proto_out = _claim_stdio()
    _set_path()
    try:
        serve(args[0], proto_in, proto_out, _timeout_env())
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        # The target's threads or atexit hooks must not keep a dead gate's worker alive.
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
