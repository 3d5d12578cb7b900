"""Never answers on one kind of input: the request times out and the child is killed."""

import time
from typing import Any

from _server import many, serve


def misbehave(request: dict[str, Any]) -> bool:
    if many(request):
        time.sleep(3600)
    return False


serve(misbehave)
