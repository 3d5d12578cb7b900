"""Every installed library adapter converts our messages to the library's objects and back losslessly.

A lossy adapter makes flags that are no bugs of the library: a key dropped on the way in reads as
``invented`` or ``moved`` on the way out. So each adapter in ``examples/targets/<library>/`` offers
the private op ``roundtrip`` (convert, convert back, trim nothing), and here every history drawn in the dialect
the adapter declares (the Chat Completions strategies, or every stored shape of contract §1 for an
Anthropic one) must come back JSON-equal, unknown keys and all.

A library's environment is installed on demand (``python examples/targets/install.py LIBRARY``),
never with ctxmodel: a library whose environment is not installed here is skipped, with the
command that installs it as the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmodel.strategies import histories
from ctxmodel.strategies.openai_chat import chat_histories
from ctxmodel.strategies.trim import trim_histories

REPO = Path(__file__).resolve().parents[3]
TARGETS = REPO / "examples" / "targets"
sys.path.insert(0, str(TARGETS))

from libraries import adapter_command, configurations, library_dirs  # noqa: E402  (examples/targets is no package)


class Adapter:
    """One adapter process spoken to over the JSON-lines protocol."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO
        )
        self.next_id = 0
        self.dialect = "anthropic"

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"id": self.next_id, "op": op, "params": params}) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the adapter exited while answering {op}"
        reply: dict[str, Any] = json.loads(line)
        assert reply.get("id") == self.next_id
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module", params=[p.name for p in library_dirs()])
def adapter(request: pytest.FixtureRequest) -> Iterator[Adapter]:
    library = TARGETS / request.param
    argv = adapter_command(library)
    if argv is None:
        pytest.skip(f"{request.param} is not installed: python examples/targets/install.py {request.param}")
    configs = configurations(argv)
    assert configs, f"{request.param}: --list printed no configuration"
    process = Adapter([*argv, configs[0]])
    process.dialect = process.call("describe", {})["result"].get("dialect", "anthropic")
    yield process
    process.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_adapter_round_trip_is_lossless(adapter: Adapter, data: st.DataObject) -> None:
    drawn = {"openai-chat": chat_histories(), "bedrock-converse": trim_histories("bedrock-converse"),
             "gemini": trim_histories("gemini")}
    history = data.draw(drawn.get(adapter.dialect, histories()), label="history")
    reply = adapter.call("roundtrip", {"messages": history})
    assert "error" not in reply, reply["error"]
    assert reply["result"]["messages"] == history
