"""Takes a while to start (as a Node agent bundle does) and hangs on three messages or more: a
shrink that counted the restart after each kill against the input would call every input a hang."""

import time
from typing import Any

from _server import serve

time.sleep(0.6)


def misbehave(request: dict[str, Any]) -> bool:
    if request["op"] == "normalize" and len(request["params"].get("messages", [])) >= 3:
        time.sleep(3600)
    return False


serve(misbehave)
