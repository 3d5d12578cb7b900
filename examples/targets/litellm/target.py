"""LiteLLM's ``trim_messages`` as a ctxmodel ``trim`` target (contract §10), in its own environment.

    python examples/targets/install.py litellm
    ctxmodel check --timeout 30 --target exec:"examples/targets/litellm/.venv/bin/python \
        examples/targets/litellm/target.py trim_messages"

``python target.py --list`` prints the configurations. The one configuration, ``trim_messages``:

- ``trim``: ``litellm.utils.trim_messages(messages, model=MODEL, max_tokens=maxTokens)``. With
  ``max_tokens`` given, ``trim_ratio`` plays no part (it only scales a model's own input window when
  ``max_tokens`` is None), so it keeps its default.
- ``count``: ``litellm.token_counter(model=MODEL, messages=messages)``, the very function
  ``trim_messages`` measures with (``get_token_count`` and its first ``token_counter`` call both
  reach it with the same model), so the budget is judged by the figure the trimmer aimed at.

``MODEL`` is ``gpt-4o``: a chat model every LiteLLM release knows, whose encoding (``o200k_base``)
LiteLLM ships in the wheel, so counting never downloads anything; and its name holds ``gpt``, which
is the case ``shorten_message_to_fit_limit`` singles out (a remaining budget of 10 tokens or less is
not shortened into), so the common OpenAI path is the one under test.

Declared from the source, not from what a run shows:

- ``trimSystem=keep``: every system message is kept (joined into one and put first; the joined
  text is shortened when it alone is over budget), the library's stated intent;
- ``trimLastUser=any``: it keeps the newest messages that fit, newest first; nothing in it singles
  out the last user message;
- ``trimPartial=yes``: a message that does not fit whole is shortened (``shorten_message_to_fit_limit``
  keeps the start and the end of its content with ``..`` between them);
- ``trimBudget=tokens``: ``maxTokens`` is its ``max_tokens``.

``trim_messages`` works on a deep copy of the messages, so its answer holds copies: each returned
message equal to an input message is answered with that input message, in order, and a shortened
or joined one is returned as LiteLLM built it (the gate then judges it as a partial or an invented
message).
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any

MODEL = "gpt-4o"
CONFIGURATIONS = ("trim_messages",)
POLICIES = {"trimSystem": "keep", "trimLastUser": "any", "trimPartial": "yes", "trimBudget": "tokens"}


def originals(answer: list[Any], messages: list[Any]) -> list[Any]:
    """The answer with every message equal to an input message, matched in order, replaced by it."""
    out: list[Any] = []
    start = 0
    for message in answer:
        for index in range(start, len(messages)):
            if messages[index] == message:
                out.append(messages[index])
                start = index + 1
                break
        else:
            out.append(message)
    return out


def trim(params: dict[str, Any]) -> dict[str, Any]:
    from litellm.utils import trim_messages

    messages = params["messages"]
    answer = trim_messages(messages, model=MODEL, max_tokens=params.get("maxTokens"))
    if isinstance(answer, tuple):  # only with return_response_tokens=True, which is never passed
        answer = answer[0]
    return {"messages": originals(list(answer), messages)}


def count(params: dict[str, Any]) -> dict[str, Any]:
    from litellm.utils import token_counter

    return {"tokens": token_counter(model=MODEL, messages=params["messages"])}


def roundtrip(params: dict[str, Any]) -> dict[str, Any]:
    """What ``trim`` does to the messages around the library: its deep copy, mapped back."""
    messages = params["messages"]
    return {"messages": originals(copy.deepcopy(messages), messages)}


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        print("\n".join(CONFIGURATIONS))
        return 0
    if len(argv) != 1 or argv[0] not in CONFIGURATIONS:
        print(f"usage: target.py --list | {' | '.join(CONFIGURATIONS)}", file=sys.stderr)
        return 2
    # Without it LiteLLM fetches its model cost map over the network when it is imported.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import importlib
    from importlib.metadata import version

    from ctxmodel_target import serve  # before the library: the kit takes stdout, so nothing it prints can reach it

    importlib.import_module("litellm.utils")  # loaded now, not during the first request

    serve(
        name=f"litellm trim_messages ({MODEL})",
        version=version("litellm"),
        dialect="openai-chat",
        tokenizer={"encoding": "o200k_base", "fudge": 1},
        policies=POLICIES,
        ops={"trim": trim, "count": count, "roundtrip": roundtrip},
        describe={"ops": ["count", "trim"]},  # roundtrip is the adapter's own, for its test only
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
