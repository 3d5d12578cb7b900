"""Strands Agents' sliding window, judged by ctxmodel's Bedrock Converse oracle.

Builds valid Converse histories (a task, then text exchanges and tool rounds of one to three
parallel calls), lets ``SlidingWindowConversationManager`` (window 0 to the history's length) trim
each in place, and tallies what ``ctxmodel.dialects.bedrock_converse.validate`` says of the answer.
Strands is the code under test, so it lives in its own environment, pinned, never a dependency of
ctxmodel:

    python3 -m venv /tmp/strands && /tmp/strands/bin/pip install strands-agents==1.62.0 -e .
    /tmp/strands/bin/python examples/bedrock-converse/strands_sliding_window.py [SEED] [N]

Window 0 empties the history by design (its docstring: "remove all non-pinned messages"), so
``empty-messages`` is the configuration's, not a finding; the next request adds the user's message.
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import random
import sys
import types
from typing import Any

from strands.agent.conversation_manager import SlidingWindowConversationManager

from ctxmodel.dialects.bedrock_converse import load, validate


def history(rng: random.Random) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "task"}]}]
    n = 0
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.6:
            ids = [f"tooluse_{n + i}" for i in range(rng.choice([1, 1, 2, 3]))]
            n += len(ids)
            say = [{"text": "working"}] if rng.random() < 0.5 else []
            messages.append({"role": "assistant", "content": say + [
                {"toolUse": {"toolUseId": i, "name": "read", "input": {}}} for i in ids]})
            messages.append({"role": "user", "content": [
                {"toolResult": {"toolUseId": i, "content": [{"text": "ok"}], "status": "success"}} for i in ids]})
        else:
            messages.append({"role": "assistant", "content": [{"text": "done"}]})
            messages.append({"role": "user", "content": [{"text": "next"}]})
    return messages


def main() -> None:
    logging.disable(logging.WARNING)  # Strands logs every window it cannot trim
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(seed)
    tally: collections.Counter[tuple[str, ...]] = collections.Counter()
    first: dict[tuple[str, ...], tuple[int, list[Any], list[Any]]] = {}
    for _ in range(runs):
        messages = history(rng)
        window = rng.randint(0, len(messages))
        agent = types.SimpleNamespace(messages=copy.deepcopy(messages))
        SlidingWindowConversationManager(window_size=window).apply_management(agent)  # type: ignore[arg-type]
        kinds = tuple(sorted({v.rule for v in validate(load(agent.messages))})) or ("ok",)
        tally[kinds] += 1
        first.setdefault(kinds, (window, messages, agent.messages))
    for kinds, n in tally.most_common():
        print(f"{n:4d}  {', '.join(kinds)}")
    for kinds, (window, before, after) in first.items():
        if kinds != ("ok",):
            print(f"first {', '.join(kinds)}: window {window}, {len(before)} -> {len(after)} messages: "
                  f"{json.dumps(after)[:300]}")


if __name__ == "__main__":
    main()
