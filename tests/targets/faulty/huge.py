"""Answers normalize with a 50 MB line: the harness must refuse it without holding it all."""

import sys
from typing import Any

from _server import serve


def misbehave(request: dict[str, Any]) -> bool:
    if request["op"] == "normalize":
        chunk = "x" * (1 << 20)
        sys.stdout.write('{"id": ' + str(request["id"]) + ', "result": {"messages": [], "pad": "')
        try:
            for _ in range(50):
                sys.stdout.write(chunk)
            sys.stdout.write('"}}\n')
            sys.stdout.flush()
        except BrokenPipeError:
            sys.exit(0)
        return True
    return False


serve(misbehave)
