"""Answers normalize with the wrong request id (a server that mixes up concurrent replies)."""

from _server import serve, write


def misbehave(request: dict) -> bool:
    if request["op"] == "normalize":
        write({"id": request["id"] + 1, "result": {"messages": request["params"].get("messages", [])}})
        return True
    return False


serve(misbehave)
