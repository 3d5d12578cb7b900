"""Dies on one kind of input (two messages or more); the harness restarts it for the next."""

import os
import sys
from typing import Any

from _server import many, serve


def misbehave(request: dict[str, Any]) -> bool:
    if many(request):
        sys.stderr.write("faulty target: segmentation fault (simulated)\n")
        sys.stderr.flush()
        os._exit(139)
    return False


serve(misbehave)
