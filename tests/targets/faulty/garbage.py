"""Prints a line that is not JSON (a stray console.log) on one kind of input."""

import sys
from typing import Any

from _server import many, serve


def misbehave(request: dict[str, Any]) -> bool:
    if many(request):
        sys.stdout.write("normalizing 2 messages...\n")
        sys.stdout.flush()
        return True
    return False


serve(misbehave)
