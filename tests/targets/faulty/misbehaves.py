"""A ``python:`` target that does, on request, what no op may: each way a Python op can take its
interpreter down or hang, plus printing to stdout (which must not corrupt the protocol).

``params["do"]`` picks the misdeed; without it every op answers like the reference. ``recover``
loops forever on two messages or more (an "infinite loop in recover").
"""

import os
import sys
import time
from typing import Any

from ctxmodel.targets.reference import ReferenceTarget

_reference = ReferenceTarget()


def describe(params: dict[str, Any]) -> dict[str, Any]:
    ops = ["describe", "normalize", "effective", "request", "count", "recover"]  # what this module defines
    return {**_reference.call("describe", {}), "name": "faulty-misbehaves", "ops": ops}


def _misbehave(params: dict[str, Any]) -> None:
    do = params.get("do")
    if do == "exit3":
        sys.exit(3)
    if do == "exit-message":
        sys.exit("bye")
    if do == "os-exit":
        os._exit(0)
    if do == "interrupt":
        raise KeyboardInterrupt
    if do == "print":
        print("chatty log line", flush=True)
        sys.stdout.write("another\n")
    if do == "sleep":
        time.sleep(float(params.get("seconds", 60)))
    if do == "swallow":  # a loop that swallows every interrupt: only killing ends it
        while True:
            try:
                time.sleep(60)
            except BaseException:  # the point of this target
                pass
    if do == "mutate":
        params["messages"][0]["content"] = "changed"
        params["messages"].append({"role": "user", "content": "extra"})


def normalize(params: dict[str, Any]) -> dict[str, Any]:
    _misbehave(params)
    return _reference.call("normalize", {"messages": params["messages"]})


def effective(params: dict[str, Any]) -> dict[str, Any]:
    _misbehave(params)
    return _reference.call("effective", {"messages": params["messages"]})


def request(params: dict[str, Any]) -> dict[str, Any]:
    return _reference.call("request", params)


def count(params: dict[str, Any]) -> dict[str, Any]:
    return _reference.call("count", params)


def recover(params: dict[str, Any]) -> dict[str, Any]:
    if len(params.get("messages", [])) >= 2:
        while True:  # an infinite loop, as a bad cut search has
            pass
    return _reference.call("recover", params)
