"""Answers normalize with the wrong request id (a server that mixes up concurrent replies)."""

from typing import Any

from _server import serve, write


def misbehave(request: dict[str, Any]) -> bool:
    if request["op"] == "normalize":
        write({"id": request["id"] + 1, "result": {"messages": request["params"].get("messages", [])}})
        return True
    return False


serve(misbehave)
