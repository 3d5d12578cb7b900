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

NAMES = ("contents", "compaction")
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(NAMES))
    sys.exit(0)

import asyncio
import logging
import warnings
from collections.abc import AsyncGenerator
from importlib import metadata
from typing import Any

from ctxmodel_target import serve
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.compaction import _run_compaction_for_token_threshold_config
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events import Event
from google.adk.flows.llm_flows.contents import _get_contents
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions import Session
from google.genai import types

Msg = dict[str, Any]
AGENT = "agent"

logging.disable(logging.WARNING)  # ADK logs every call it drops, on stderr
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")  # compaction's config says it is new

#: ADK builds the request from every event: no budget, every prompt kept, no system messages (the
#: instruction is apart), and it drops the function calls no response answers and the responses
#: no call asked for (``drop_orphaned_function_calls``, ``_drop_orphaned_function_responses``: a
#: content less some of those parts, or gone when nothing is left), by design: declared as pruning
#: tool calls (``trimToolCalls=pairs``). It moves a function response that came after a user content
#: back to the content right after its call, joined with the call's other responses, responses first
#: (``tools/_rearranger.py``, ``rearrange_events_for_async_function_responses_in_history`` and
#: ``merge_function_response_events``), by design: declared as ``lateResults=rejoin``.
POLICIES = {"trimBudget": "none", "trimSystem": "any", "trimToolCalls": "pairs", "lateResults": "rejoin"}

#: With token-threshold compaction (``EventsCompactionConfig``, run before the contents are built by
#: ``CompactionRequestProcessor``, ``flows/llm_flows/context/_compaction.py``) the events before the
#: last ``event_retention_size`` become one summary content where they stood: a placeholder
#: (``trimPlaceholder=one``). The retention counts events, not prompts, so the last user prompt may
#: be summarized (``trimLastUser=any``). The threshold is a trigger ("attempt a compaction when the
#: prompt token count meets or exceeds this threshold"), not a promise that the request fits: it is
#: set at 1 token, so that every history of 4 characters or more is compacted, and no budget is
#: declared (``trimBudget=none``).
COMPACTION_POLICIES = {**POLICIES, "trimPlaceholder": "one", "trimLastUser": "any"}
RETAINED = 2
SUMMARY = "Summary of the conversation so far."


class SummaryModel(BaseLlm):
    """The summarizer's model, offline: one fixed summary for whatever it is asked."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=SUMMARY)]))


class Sessions:
    """What compaction appends its event through (``BaseSessionService.append_event``)."""

    async def append_event(self, session: Session, event: Event) -> Event:
        session.events.append(event)
        return event


def compacted(events: list[Event]) -> list[Event]:
    """The session's events after the request path's token-threshold compaction."""
    config = EventsCompactionConfig(token_threshold=1, event_retention_size=RETAINED,
                                    summarizer=LlmEventSummarizer(llm=SummaryModel(model="summary-stub")))
    session = Session(id="s", app_name="ctxmodel", user_id="u", events=list(events))
    asyncio.run(_run_compaction_for_token_threshold_config(
        config=config, session=session, session_service=Sessions(),  # type: ignore[arg-type]
        agent=None, agent_name=AGENT))  # type: ignore[arg-type]
    return session.events


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
        events.append(Event(author=author, invocation_id=f"inv-{turn}", timestamp=float(len(events) + 1),
                            content=types.Content.model_validate(content)))
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


def trim_compacted(params: dict[str, Any]) -> dict[str, Any]:
    contents: list[Msg] = params["messages"]
    return {"messages": back(_get_contents(None, compacted(to_events(contents)), AGENT), contents)}


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    contents: list[Msg] = params["messages"]
    return {"messages": back([e.content for e in to_events(contents) if e.content is not None], contents)}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in NAMES:
        print(f"usage: target.py --list | CONFIG, one of: {', '.join(NAMES)}", file=sys.stderr)
        return 2
    compaction = argv[0] == "compaction"
    serve(name=f"google-adk {argv[0]}", version=metadata.version("google-adk"), dialect="gemini",
          policies=COMPACTION_POLICIES if compaction else POLICIES,
          ops={"trim": trim_compacted if compaction else trim, "roundtrip": roundtrip})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
