"""``python:package.module[:object]`` targets: functions named after the ops (contract §7).

The module is imported with the working directory on ``sys.path`` (as pytest does), so a project
can point the gate at its own code without installing it.

Two transports:

- :class:`PythonWorkerTarget`, what the command line, the pytest plugin and the fuzzer use
  (``open_target``): the module runs in a worker process (``ctxmodel.targets._pyworker``) speaking
  the ``exec:`` JSON-lines protocol, so every request has the same deadline, a target that loops,
  crashes the interpreter, calls ``sys.exit`` or ``os._exit`` fails that input (contract §9) and is
  restarted, and never takes the gate down or decides its exit status. The worker compares the
  params after each call with a copy taken before, and reports a mutation (contract §1) in its
  reply (``"mutated": [paths]`` and the params as the op left them); the parent writes the
  mutation back into the params object it was handed, so a mutation shows exactly as it would
  in process (``TargetProbe.sent`` differs from the record) and is also kept as
  ``last_mutated``.
- :class:`PythonTarget`, in process, for tests that hand Python objects over: each call hands the
  params over as they are (callers pass a private copy, as ``TargetProbe`` does), and the reply is
  re-encoded as strict JSON, which both checks that it is JSON and gives the harness a value the
  target can no longer mutate. Ask for it explicitly (``open_target(spec, in_process=True)``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ctxmodel.errors import TargetError, UsageError, describe_exception
from ctxmodel.targets.base import OPS, Description, FailureKind, TargetFailure
from ctxmodel.targets.handshake import parse_description
from ctxmodel.targets.process import DEFAULT_MAX_REPLY, DEFAULT_TIMEOUT, ProcessTarget

__all__ = ["PythonTarget", "PythonWorkerTarget", "load_ops", "parse_description", "strict_copy"]

Op = Callable[[dict[str, Any]], Any]

#: The worker's private ops: which ops the module defines (or why it could not be loaded), and
#: load what ctxmodel's own ops load lazily (after every start, outside any request deadline).
OPS_QUERY = "_ops"
WARM = "_warm"
#: Seconds a worker gets to start (interpreter, the target's import, warming), apart from requests.
START_TIMEOUT = 60.0
#: The parent's ``sys.path``, handed to the worker so modules resolve as they would in process.
PATH_ENV = "CTXMODEL_PYWORKER_PATH"
#: The per-request timeout, which the worker enforces itself (see ``_pyworker``).
TIMEOUT_ENV = "CTXMODEL_PYWORKER_TIMEOUT"
#: Error kinds a worker reply may claim (a plain process can only send ``error-reply``).
_WORKER_KINDS: frozenset[str] = frozenset({"crash", "timeout", "protocol", "error-reply", "exception", "start"})


def load_ops(spec: str) -> tuple[str, dict[str, Op]]:
    """Import ``package.module[:object]`` (the working directory first on ``sys.path``) and find
    its ops: ``(module name, {op: callable})``. ``TargetFailure("start")`` when it cannot."""
    module_name, _, object_name = spec.partition(":")
    if not module_name:
        raise UsageError(f"python:{spec}: expected python:package.module[:object]")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise TargetFailure("start", f"python:{spec}: cannot import: {describe_exception(exc)}") from None
    holder: Any = module
    if object_name:
        try:
            for part in object_name.split("."):
                holder = getattr(holder, part)
        except AttributeError:
            raise TargetFailure("start", f"python:{spec}: {module_name} has no {object_name}") from None
        if isinstance(holder, type):
            # A class: one fresh instance per target, so state never leaks between runs.
            try:
                holder = holder()
            except Exception as exc:
                why = describe_exception(exc)
                raise TargetFailure("start", f"python:{spec}: cannot instantiate: {why}") from None
    ops: dict[str, Op] = {op: getattr(holder, op) for op in OPS if callable(getattr(holder, op, None))}
    if not ops:
        raise TargetFailure("start", f"python:{spec}: defines none of the ops {', '.join(OPS)}")
    return module_name, ops


def strict_copy(value: Any, what: str) -> dict[str, Any]:
    """The reply as fresh strict JSON (no NaN, no tuples, no objects): what a process would send."""
    if not isinstance(value, dict):
        raise TargetFailure("protocol", f"{what}: expected a JSON object reply, got {type(value).__name__}")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TargetFailure("protocol", f"{what}: reply is not strict JSON: {exc}") from None
    out: dict[str, Any] = json.loads(text)
    return out


def _described(spec: str, module_name: str, defined: frozenset[str], call: Callable[[], Any]) -> Description:
    """The handshake both transports share: ``describe`` if the module has it (every op it declares
    must be defined), else the contract's defaults with the ops it defines."""
    if "describe" not in defined:
        return Description(name=module_name, version="", ops=defined)
    try:
        reply = call()
    except TargetError as exc:
        raise TargetFailure("start", f"python:{spec}: describe failed: {exc}") from None
    description = parse_description(reply, module_name)
    missing = sorted(description.ops - defined)
    if missing:
        # Declared and absent: its properties would be skipped as if the target never offered it.
        raise TargetFailure(
            "start", f"python:{spec}: describe declares {', '.join(missing)}, which the module does not define"
        )
    return description


class PythonTarget:
    """In process: for tests that pass Python objects. Nothing protects the gate from the target."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        module_name, self._ops = load_ops(spec)
        self.description = _described(spec, module_name, frozenset(self._ops), lambda: self.call("describe", {}))

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        fn = self._ops.get(op)
        if fn is None:
            raise TargetFailure("error-reply", f"python:{self.spec} has no op {op!r}")
        try:
            reply = fn(params)
        except Exception as exc:
            raise TargetFailure("exception", f"{op}: {describe_exception(exc)}") from None
        return strict_copy(reply, op)

    def close(self) -> None:
        pass


def worker_argv(spec: str) -> list[str]:
    return [sys.executable, "-m", "ctxmodel.targets._pyworker", spec]


class PythonWorkerTarget(ProcessTarget):
    """A ``python:`` target in a worker process, driven like an ``exec:`` target (see the module)."""

    def __init__(self, spec: str, *, timeout: float = DEFAULT_TIMEOUT, max_reply: int = DEFAULT_MAX_REPLY) -> None:
        if not spec.partition(":")[0]:
            raise UsageError(f"python:{spec}: expected python:package.module[:object]")
        self.spec = spec
        #: The params paths the last call changed (contract §1), as the worker reported them.
        self.last_mutated: tuple[str, ...] = ()
        #: The tokenizer to warm after each start, once the handshake has told it.
        self._warm_with: dict[str, Any] | None = None
        env = dict(os.environ)
        env[PATH_ENV] = json.dumps([os.getcwd(), *sys.path])
        env[TIMEOUT_ENV] = repr(float(timeout))
        super().__init__(
            f"python:{spec}",
            timeout=timeout,
            max_reply=max_reply,
            argv=worker_argv(spec),
            env=env,
            label=f"python:{spec}",
        )
        # The worker interrupts an op at ``timeout`` and replies; killing it is the backstop.
        self.grace = min(2.0, max(0.25, 0.2 * timeout))

    #: A restarted worker is warmed in ``_start`` instead.
    settles_on_restart = False

    def _start_timeout(self) -> float:
        return max(START_TIMEOUT, self.timeout)

    def _handshake(self) -> Description:
        try:
            info = self._result(self._exchange(OPS_QUERY, {}, timeout=self._start_timeout()), OPS_QUERY)
            defined = frozenset(op for op in info.get("ops", ()) if op in OPS)
            module_name = str(info.get("module", self.spec))
            description = _described(self.spec, module_name, defined, lambda: self.call("describe", {}))
            counts = bool(description.ops & {"recover", "count"})  # what loads counters
            self._warm_with = {"tokenizer": description.tokenizer, "counters": counts}
            self._warm()
            return description
        except TargetFailure as exc:
            self.close()
            if exc.kind in ("start", "protocol"):
                raise
            raise TargetFailure("start", f"python:{self.spec}: {exc}") from None

    def _warm(self) -> None:
        if self._warm_with is not None:
            self._exchange(WARM, self._warm_with, timeout=self._start_timeout())

    def _start(self) -> subprocess.Popen[bytes]:
        proc = super()._start()
        if self._warm_with is not None:  # a restart: warm it before the request's deadline starts
            try:
                self._warm()
            except TargetFailure:
                # The request that follows meets (and reports) whatever is wrong, in a fresh worker.
                return self._proc if self._proc is not None else super()._start()
        return proc

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self._exchange(op, params)
        mutated = reply.get("mutated")
        if mutated:
            after = reply.get("params")
            self.last_mutated = tuple(str(path) for path in mutated) if isinstance(mutated, list) else ("params",)
            if isinstance(after, dict):
                # Mirror the mutation into the object we were handed, as an in-process call would.
                params.clear()
                params.update(after)
        else:
            self.last_mutated = ()
        return self._result(reply, op)

    def _error_kind(self, error: dict[str, Any]) -> FailureKind:
        kind = error.get("kind")
        if isinstance(kind, str) and kind in _WORKER_KINDS:
            return kind  # type: ignore[return-value]
        return "error-reply"

    def _died(self, op: str) -> NoReturn:
        proc = self._proc
        code = proc.poll() if proc is not None else None
        if code is not None and code >= 0:
            self._fail_plain("crash", f"the target exited with status {code} while answering {op}")
        super()._died(op)

    def _fail_plain(self, kind: FailureKind, message: str) -> NoReturn:
        """Like ``_fail``, without the op prefix (the message names the op) or the exit code."""
        self._kill()
        tail = self._stderr.tail() if self._stderr is not None else ""
        raise TargetFailure(kind, f"{message}; stderr: {tail}" if tail else message)
