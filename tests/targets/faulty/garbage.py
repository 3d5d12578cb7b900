"""Prints a line that is not JSON (a stray console.log) on one kind of input."""

import sys

from _server import many, serve


def misbehave(request: dict) -> bool:
    if many(request):
        sys.stdout.write("normalizing 2 messages...\n")
        sys.stdout.flush()
        return True
    return False


serve(misbehave)
