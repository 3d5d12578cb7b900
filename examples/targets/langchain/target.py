"""LangChain's request-time trimmers as ``trim`` targets in the openai-chat dialect (contract §10).

Run it in the library's own environment (``python examples/targets/install.py langchain``) with one
configuration named on the command line; ``--list`` prints the names::

    ctxmodel check --target exec:"examples/targets/langchain/.venv/bin/python \\
        examples/targets/langchain/target.py last-recipe" --ops trim,count

Two families, each the library's own code, called as its docs show (``adapter.py`` does the calls):

- ``langchain_core.messages.utils.trim_messages``: one configuration per ``strategy`` with and without
  ``start_on``/``end_on``/``include_system``, the docs' chat-history recipe and one ``allow_partial``;
  ``max_tokens`` is ``maxTokens`` and the counter ``count_tokens_approximately``, which ``count``
  answers with over the same converted messages, so the budget is measured as the trimmer measures it.
- ``langchain.agents.middleware.SummarizationMiddleware``: its real ``before_model`` on a state
  holding the history; what it keeps unsummarized (the tail sent beside the summary) is the answer.
  The summary message it adds is left out: it is the one message it writes by design.

The policies are what each configuration's docs promise, and no more: ``include_system=True`` keeps
"the SystemMessage if there is one at index 0" (``trimSystem=first``; a ``developer`` message is a
``SystemMessage`` too), nothing promises the last human message (``trimLastUser=any``), and only
``allow_partial=True`` cuts a message (``trimPartial=yes``). ``strategy="last"`` keeps the newest
messages that fit (the default ``trimKeep=newest``), ``"first"`` the oldest (``trimKeep=oldest``);
``end_on`` then drops the kept window's last messages until one of the named types ends it, so a
turn that ends with the assistant's answer is cut back by design (``trimKeep=any``). The middleware
keeps no system message by design (an agent's system prompt is not in its state's messages) and keeps N messages
(``trimBudget=none``), or the most recent ``maxTokens`` tokens of ``keep=("tokens", N)``.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import version
from typing import Any

NONE = {"trimSystem": "any", "trimLastUser": "any"}
FIRST_SYSTEM = {"trimSystem": "first", "trimLastUser": "any"}

# name -> (the call, the policies its docs promise, the family, the family's options)
CONFIGURATIONS: dict[str, tuple[str, dict[str, str], str, dict[str, Any]]] = {
    "last-recipe": (
        'trim_messages(strategy="last", start_on="human", end_on=("human", "tool"), include_system=True)',
        {**FIRST_SYSTEM, "trimKeep": "any"}, "trim_messages",
        {"strategy": "last", "start_on": "human", "end_on": ("human", "tool"), "include_system": True},
    ),
    "last": ('trim_messages(strategy="last")', NONE, "trim_messages", {"strategy": "last"}),
    "last-system": (
        'trim_messages(strategy="last", include_system=True)', FIRST_SYSTEM, "trim_messages",
        {"strategy": "last", "include_system": True},
    ),
    "last-start-human-system": (
        'trim_messages(strategy="last", start_on="human", include_system=True)', FIRST_SYSTEM, "trim_messages",
        {"strategy": "last", "start_on": "human", "include_system": True},
    ),
    "last-end-human-tool": (
        'trim_messages(strategy="last", end_on=("human", "tool"))', {**NONE, "trimKeep": "any"}, "trim_messages",
        {"strategy": "last", "end_on": ("human", "tool")},
    ),
    "last-partial": (
        'trim_messages(strategy="last", start_on="human", include_system=True, allow_partial=True)',
        {**FIRST_SYSTEM, "trimPartial": "yes"}, "trim_messages",
        {"strategy": "last", "start_on": "human", "include_system": True, "allow_partial": True},
    ),
    "first": ('trim_messages(strategy="first")', {**NONE, "trimKeep": "oldest"}, "trim_messages",
              {"strategy": "first"}),
    "first-end-human-tool": (
        'trim_messages(strategy="first", end_on=("human", "tool"))', {**NONE, "trimKeep": "any"}, "trim_messages",
        {"strategy": "first", "end_on": ("human", "tool")},
    ),
    "summarization-keep-messages-3": (
        'SummarizationMiddleware(trigger=("messages", 4), keep=("messages", 3)): the kept tail',
        {**NONE, "trimBudget": "none"}, "summarization", {"keep": ("messages", 3)},
    ),
    "summarization-keep-tokens": (
        'SummarizationMiddleware(trigger=("tokens", maxTokens + 1), keep=("tokens", maxTokens)): the kept tail',
        NONE, "summarization", {"keep": None},
    ),
}


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(CONFIGURATIONS))
        return 0
    if len(argv) != 1 or argv[0] not in CONFIGURATIONS:
        print(f"usage: target.py --list | CONFIGURATION, one of: {', '.join(CONFIGURATIONS)}", file=sys.stderr)
        return 2
    # The kit first: it takes stdout for the protocol before LangChain loads and can print.
    from ctxmodel_target import serve

    adapter = importlib.import_module("adapter")

    call, policies, family, options = CONFIGURATIONS[argv[0]]
    library = "langchain" if family == "summarization" else "langchain-core"
    serve(
        name=f"langchain {argv[0]}: {call}",
        version=f"{library} {version(library)}",
        dialect="openai-chat",
        policies=policies,
        ops=adapter.ops(family, options),
        # `roundtrip` is answered but not declared: the harness refuses an op it does not know.
        describe={"ops": ["count", "trim"]},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
