"""Google ADK's request contents (``google.adk.flows.llm_flows.contents._get_contents``) as a ``trim``
target in ``gemini``.

Run in this directory's environment (``python examples/targets/install.py adk``)::

    ctxmodel check --target exec:"examples/targets/adk/.venv/bin/python examples/targets/adk/target.py contents"

``--list`` prints the configurations. ADK keeps a session as events and, before every model call,
its contents request processor builds the ``contents`` the model is sent from them:
``_get_contents`` filters the events (invisible parts, other agents' replies, compaction), drops
orphaned function responses, rearranges responses next to their calls, drops calls no response
answers, and copies each event's content. What it returns is what Gemini reads, which is what
contract §10 calls a trimmer (with no budget: ``trimBudget=none``).

Each Gemini content of the history becomes one ``Event`` as an ADK session stores it: a user
prompt authored by ``user``, a model content and a content of function responses authored by the
agent (ADK writes a tool's responses as the agent's event, role ``user``), one invocation per turn
(from a user prompt to the next). The contents come back as the caller's own dicts where ADK
returns a content equal to one it was given (``types.Content`` equality, so key order and the
SDK's defaults never read as a change), and as ADK's JSON (``by_alias``, camelCase) where it
changed one. Ids are the caller's: ADK strips only its own ``adk-`` ids, which a drawn history
never holds.
"""

# ruff: noqa: E402  (the --list answer comes before the imports it guards)
from __future__ import annotations

import sys

NAMES = ("contents",)
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import logging
from importlib import metadata
from typing import Any

from ctxmodel_target import serve
from google.adk.events import Event
from google.adk.flows.llm_flows.contents import _get_contents
from google.genai import types

Msg = dict[str, Any]
AGENT = "agent"

logging.disable(logging.WARNING)  # ADK logs every call it drops, on stderr

#: ADK builds the request from every event: no budget, every prompt kept, no system messages (the
#: instruction is apart), and it drops the function calls no response answers and the responses
#: no call asked for (``drop_orphaned_function_calls``, ``_drop_orphaned_function_responses``: a
#: content less some of those parts, or gone when nothing is left), by design: declared as pruning
#: tool calls (``trimToolCalls=pairs``). It moves a function response that came after a user content
#: back to the content right after its call, joined with the call's other responses, responses first
#: (``tools/_rearranger.py``, ``rearrange_events_for_async_function_responses_in_history`` and
#: ``merge_function_response_events``), by design: declared as ``lateResults=rejoin``.
POLICIES = {"trimBudget": "none", "trimSystem": "any", "trimToolCalls": "pairs", "lateResults": "rejoin"}


def _is_prompt(content: Msg) -> bool:
    parts = content.get("parts") or []
    return content.get("role") == "user" and not any(
        isinstance(p, dict) and ("functionResponse" in p or "function_response" in p) for p in parts)


def to_events(contents: list[Msg]) -> list[Event]:
    events: list[Event] = []
    turn = 0
    for content in contents:
        if _is_prompt(content):
            turn += 1
        author = "user" if _is_prompt(content) else AGENT
        events.append(Event(author=author, invocation_id=f"inv-{turn}", content=types.Content.model_validate(content)))
    return events


def back(sent: list[types.Content], contents: list[Msg]) -> list[Msg]:
    """Each sent content as the caller's dict it equals (the earliest not used yet), else ADK's JSON."""
    given = [types.Content.model_validate(c) for c in contents]
    used: set[int] = set()
    out: list[Msg] = []
    for content in sent:
        match = next((i for i, g in enumerate(given) if i not in used and g == content), None)
        if match is None:
            out.append(content.model_dump(mode="json", by_alias=True, exclude_none=True))
        else:
            used.add(match)
            out.append(contents[match])
    return out


def trim(params: dict[str, Any]) -> dict[str, Any]:
    contents: list[Msg] = params["messages"]
    return {"messages": back(_get_contents(None, to_events(contents), AGENT), contents)}


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    contents: list[Msg] = params["messages"]
    return {"messages": back([e.content for e in to_events(contents) if e.content is not None], contents)}


def main(argv: list[str]) -> int:
    if argv != ["contents"]:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(NAMES)}", file=sys.stderr)
        return 2
    serve(name="google-adk contents", version=metadata.version("google-adk"), dialect="gemini",
          policies=POLICIES, ops={"trim": trim, "roundtrip": roundtrip})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
