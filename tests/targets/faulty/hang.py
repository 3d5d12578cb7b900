"""Never answers on one kind of input: the request times out and the child is killed."""

import time

from _server import many, serve


def misbehave(request: dict) -> bool:
    if many(request):
        time.sleep(3600)
    return False


serve(misbehave)
