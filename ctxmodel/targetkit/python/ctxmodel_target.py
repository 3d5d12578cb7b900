"""ctxmodel target kit for Python code that runs in its own environment (contract §7).

Standard library only, so it runs in the interpreter of the library under test, beside that
library's own pins, without ctxmodel or its dependencies installed there::

    from ctxmodel_target import serve

    serve(
        name="langchain-core trim_messages", version="1.8.1", dialect="openai-chat",
        policies={"trimSystem": "keep"},
        ops={"trim": my_trim, "count": my_count},
    )

and the gate drives it as a process target: ``--target exec:"ENV/bin/python adapter.py"``.
(``examples/targets/install.py`` creates such an environment and puts this file on its path.)

Importing this module takes file descriptor 1 for the protocol (below), so an adapter that prints
something for a person (``adapter.py --list``, a usage line) does it before importing the kit, or
writes it with ``say``.

What it does, so that an adapter holds only the mapping onto the library's functions:

- the JSON-lines loop on stdin and stdout, one request at a time, ``describe`` built from the
  arguments, and every other write to file descriptor 1 (a library's ``print``, a C extension's
  output) sent to stderr, so nothing the library does can break the protocol;
- error replies whose message is ``Type: message (at file:line)``, the innermost frame of the
  adapter or the library that raised, and the process goes on serving;
- a check that an op did not change its params: a copy is taken before the call and compared
  after it, and a difference is an error reply naming the first changed JSON path. The harness
  only ever sees a copy of a process target's input, so a library that edits the caller's list
  in place would otherwise pass;
- replies written as strict ASCII JSON: a lone surrogate is sent as its ``\\udXXX`` escape (as a
  JavaScript target would), and a NaN or an infinity is an error reply, not invalid JSON.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KIT_VERSION", "first_difference", "say", "serve"]

KIT_VERSION = "1.0.0"
PROTOCOL = 1
#: The contract's ops (§7): the ones ``describe`` lists. An adapter may answer others of its own
#: (``roundtrip``, for its round-trip test); the harness is never told of them.
CONTRACT_OPS = frozenset({"normalize", "effective", "request", "recover", "count", "repair", "trim"})

Op = Callable[[dict[str, Any]], dict[str, Any]]


def _take_stdout() -> Any:
    """Keep file descriptor 1 for the protocol and point it at stderr for everything else.

    Done when the kit is imported, before the adapter imports the library, so that what a library
    prints while it loads cannot reach the protocol either.
    """
    sys.stdout.flush()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii", newline="\n")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return out


_PROTOCOL_OUT = _take_stdout()


def first_difference(before: Any, after: Any, path: str = "") -> str | None:
    """The first JSON path at which ``after`` differs from ``before``, or None when they are equal."""
    if type(before) is not type(after):
        return path or "params"
    if isinstance(before, dict):
        for key in before.keys() | after.keys():
            if key not in before or key not in after:
                return f"{path}.{key}" if path else str(key)
            found = first_difference(before[key], after[key], f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(before, list):
        for index, (b, a) in enumerate(zip(before, after, strict=False)):
            found = first_difference(b, a, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
        if len(before) != len(after):
            return path or "params"
        return None
    return None if before == after else (path or "params")


def say(text: str) -> None:
    """Write ``text`` and a newline to the process's real standard output, outside the protocol
    (for an adapter's ``--list`` once the kit is imported)."""
    _PROTOCOL_OUT.write(text + "\n")
    _PROTOCOL_OUT.flush()


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {os.path.basename(last.filename)}:{last.lineno})"


def _describe_exception(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}{_where(exc)}" if text else f"{type(exc).__name__}{_where(exc)}"


def _reply_line(reply: dict[str, Any]) -> str:
    try:
        return json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        return json.dumps(
            {"id": reply.get("id"), "error": {"message": f"the reply is not strict JSON: {exc}"}},
            ensure_ascii=True,
        )


def serve(
    *,
    name: str,
    version: str,
    ops: Mapping[str, Op],
    dialect: str | None = None,
    tokenizer: str | Mapping[str, Any] | None = None,
    policies: Mapping[str, str] | None = None,
    describe: Mapping[str, Any] | None = None,
    check_mutation: bool = True,
) -> None:
    """Serve ``ops`` on stdin and stdout until stdin closes."""
    protocol_out = _PROTOCOL_OUT
    description: dict[str, Any] = {
        "protocol": PROTOCOL,
        "name": name,
        "version": version,
        "ops": sorted(op for op in ops if op in CONTRACT_OPS),
        "kit": f"python {KIT_VERSION}",
    }
    if dialect is not None:
        description["dialect"] = dialect
    if tokenizer is not None:
        description["tokenizer"] = tokenizer
    if policies:
        description["policies"] = dict(policies)
    description.update(describe or {})
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="surrogatepass")
        if not line.strip():
            continue
        request_id: Any = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            op = request.get("op")
            params = request.get("params", {})
            if op == "describe":
                reply: dict[str, Any] = {"id": request_id, "result": description}
            elif op not in ops:
                reply = {"id": request_id, "error": {"message": f"{name} has no op {op!r}"}}
            else:
                pristine = json.loads(json.dumps(params)) if check_mutation else None
                result = ops[op](params)
                changed = first_difference(pristine, params) if check_mutation else None
                if changed is not None:
                    reply = {"id": request_id, "error": {"message": f"{op} mutated its input at {changed}"}}
                elif not isinstance(result, dict):
                    returned = type(result).__name__
                    reply = {"id": request_id, "error": {"message": f"{op} returned {returned}, not an object"}}
                else:
                    reply = {"id": request_id, "result": result}
        except Exception as exc:  # one request's failure is its reply; the loop serves the next
            reply = {"id": request_id, "error": {"message": _describe_exception(exc)}}
        protocol_out.write(_reply_line(reply) + "\n")
        protocol_out.flush()
