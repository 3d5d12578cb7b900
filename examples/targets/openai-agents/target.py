"""The OpenAI Agents SDK's session limit as a ``trim`` target (contract §10), in its own environment
(``python examples/targets/install.py openai-agents``); one configuration a process, named on the
command line; ``--list`` prints the names::

    cd examples/targets/openai-agents
    ctxmodel check --ops trim --target exec:".venv/bin/python target.py get-items"

A session limits what it returns by a count of items: ``SQLiteSession.get_items(limit=N)``, or
``SessionSettings(limit=N)`` on the session or in ``RunConfig``, which ``get_items()`` and the runner
resolve to the same call. It returns the newest N items as stored, and nothing more. The runner then
prepares the model's input from them: it drops a call with no output and, when a limit was applied,
an output whose call the limit cut away, then removes repeated call ids. Two configurations:

- ``get-items``: what ``SQLiteSession.get_items(limit=4)`` returns;
- ``runner``: what ``Runner.run`` sends the model for the turn that opens at the last user message
  (the run's input), the turns before it being a session with ``SessionSettings(limit=4)`` (the model
  is a recorder that answers one text, so nothing leaves the machine). The run's input is always
  sent, so this one keeps the last user message (``trimLastUser=keep``).

The limit counts items, not tokens, and an item is not a message (an assistant message with three
calls is four items), so ``maxTokens`` cannot be it: the adapter declares ``trimBudget=none`` and
fixes the limit. The SDK makes no promise about system messages (``trimSystem=any``) or, in a
session's items, the last user message (``trimLastUser=any``). It cuts no item, but a limit on
items can keep an assistant message's calls without the text item before them: a partial of the
message as contract §10 words it, so it declares ``trimPartial=yes``.

The conversion, both ways lossless: each Chat Completions message becomes the Responses items an
agent's session holds for it (a ``message`` item; an assistant's ``function_call`` per tool call,
after its text; a ``tool`` message's ``function_call_output``), each tagged with the message and the
item it came from (a session stores JSON, so an item read back is a new object and the tag is the
side table's key). Back, a message whose items all return in order is the original dict; some of its
items make the original less the calls (and the text) that did not return, the message the SDK's
own Chat Completions converter makes of them: an edited message, as the gate sees it.
"""

from __future__ import annotations

import sys

POLICIES = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "yes", "trimBudget": "none"}

#: name -> (what it is, which call, the item limit, the policies); the ``responses-`` ones take and
#: return Responses items (dialect ``openai-responses``), the others Chat Completions messages.
CONFIGURATIONS: dict[str, tuple[str, str, int, dict[str, str]]] = {
    "get-items": ("SQLiteSession.get_items(limit=4)", "get-items", 4, POLICIES),
    "runner": (
        "Runner.run's model input, the turns before the last user message in a session with SessionSettings(limit=4)",
        "runner",
        4,
        # The run's input keeps the last user message; an assistant message whose calls' outputs the
        # limit cut is sent less those calls (the SDK's own repair), a call with its results.
        {**POLICIES, "trimLastUser": "keep", "trimToolCalls": "pairs"},
    ),
    # The same two calls on the items a session really holds: reasoning items, ids, encrypted
    # content and all. An item is never cut (trimPartial=no); the SDK promises nothing of reasoning
    # beyond keeping it (trimReasoning=keep, the default).
    "responses-get-items": ("SQLiteSession.get_items(limit=4) on Responses items", "get-items", 4,
                            {**POLICIES, "trimPartial": "no"}),
    "responses-runner": (
        "Runner.run's model input on Responses items, the items before the last user message in a session "
        "with SessionSettings(limit=4)",
        "runner",
        4,
        {**POLICIES, "trimPartial": "no", "trimLastUser": "keep"},
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
    from session import roundtrip, roundtrip_items, trim_items_op, trim_op

    what, how, limit, policies = CONFIGURATIONS[argv[0]]
    items = argv[0].startswith("responses-")
    serve(
        name=f"openai-agents {argv[0]}: {what}",
        version=f"openai-agents {version('openai-agents')}",
        dialect="openai-responses" if items else "openai-chat",
        policies=policies,
        ops={"trim": trim_items_op(how, limit), "roundtrip": roundtrip_items} if items
        else {"trim": trim_op(how, limit), "roundtrip": roundtrip},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
