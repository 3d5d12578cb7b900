"""Semantic Kernel's ``ChatHistoryTruncationReducer`` as a ``trim`` target (contract §10), in its own
environment (``python examples/targets/install.py semantic-kernel``); one configuration a process,
named on the command line; ``--list`` prints the names::

    cd examples/targets/semantic-kernel
    ctxmodel check --ops trim --target exec:".venv/bin/python target.py defaults"

The reducer counts messages, not tokens: ``target_count`` is the number of messages it aims to keep
and ``threshold_count`` how many more it lets through before it cuts at all. Neither is a budget it
keeps: to keep a function call with its results it walks the cut back past ``target_count``, and a
threshold lets a user message up to ``threshold_count`` messages further back open the window. So
the adapter declares ``trimBudget=none`` and each configuration fixes ``target_count``, rather than
reading ``maxTokens`` as a message count: a ``count`` that counts messages breaks contract §10.7 by
construction (a tool call's arguments never count), and an answer longer than ``target_count`` is
the reducer's documented design, not an over-budget answer.

Declared policies, from what the reducer promises: it keeps the first system or developer message
and prepends it when the cut drops it (``trimSystem=first``; later ones may go), it keeps no
particular user message (``trimLastUser=any``: a threshold only *tries* to open on one), it cuts no
message (``trimPartial=no``).

The conversion: each Chat Completions message becomes a ``ChatMessageContent`` with the role and
the items the reducer reads (``TextContent``, ``ImageContent``, an assistant's ``FunctionCallContent``
per tool call, a ``tool`` message's ``FunctionResultContent``), the way Semantic Kernel's OpenAI
connector holds them. The reducer keeps the objects it is given, so the answer is mapped back by
identity to the original dicts, unknown keys and all; a message the reducer made itself (none is
expected) is converted back from its items, so the gate sees it as what it is.
"""

from __future__ import annotations

import sys
from typing import Any

POLICIES = {"trimSystem": "first", "trimLastUser": "any", "trimPartial": "no", "trimBudget": "none"}

#: name -> (what it is, the reducer's keyword arguments, whether messages are added one at a time).
#: ``target_count`` has no default; 4 is small enough that the drawn histories (a few turns) are cut.
CONFIGURATIONS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "defaults": (
        "ChatHistoryTruncationReducer(target_count=4), threshold_count=0 and auto_reduce=False by default",
        {"target_count": 4},
        False,
    ),
    "threshold": (
        "ChatHistoryTruncationReducer(target_count=4, threshold_count=2)",
        {"target_count": 4, "threshold_count": 2},
        False,
    ),
    "auto-reduce": (
        "ChatHistoryTruncationReducer(target_count=4, auto_reduce=True), each message added with add_message_async",
        {"target_count": 4, "auto_reduce": True},
        True,
    ),
    # target_count=1 is the samples' "keep the last message" reducer, the smallest target: a cut there
    # can keep the system message alone while a call's results are still being added.
    "auto-reduce-target1": (
        "ChatHistoryTruncationReducer(target_count=1, threshold_count=1, auto_reduce=True), "
        "each message added with add_message_async",
        {"target_count": 1, "threshold_count": 1, "auto_reduce": True},
        True,
    ),
}


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(CONFIGURATIONS))
        return 0
    if len(argv) != 1 or argv[0] not in CONFIGURATIONS:
        print(f"usage: target.py --list | CONFIGURATION, one of: {', '.join(CONFIGURATIONS)}", file=sys.stderr)
        return 2
    # Imported only now: the kit takes file descriptor 1 for the protocol when it is imported, and
    # ``--list`` prints there.
    from importlib.metadata import version

    from ctxmodel_target import serve
    from reducer import roundtrip, trim_op

    what, kwargs, one_at_a_time = CONFIGURATIONS[argv[0]]
    serve(
        name=f"semantic-kernel {argv[0]}: {what}",
        version=f"semantic-kernel {version('semantic-kernel')}",
        dialect="openai-chat",
        policies=POLICIES,
        ops={"trim": trim_op(kwargs, one_at_a_time), "roundtrip": roundtrip},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
