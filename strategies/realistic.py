"""Histories at the size and shape of real agent sessions (domain §1.4).

The real Zoo-Code task of domain §1.4 has 516 messages: nearly every user message is
``[tool_result, text(<environment_details>...)]``, about one tool pair per turn, most assistant
messages open with a ``reasoning`` block, a fifth of results hold list content. Drawing that much
text character by character would overrun Hypothesis's choice budget, so each block draws only a
size and a seed, and its text is sliced from a fixed corpus (``ctxmodel.strategies.text.filler``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from ctxmodel.contract_data import marker_text
from ctxmodel.json_types import JsonMessage as Msg
from ctxmodel.strategies.histories import SUMMARY_PREFIX, TS_BASE
from ctxmodel.strategies.ids import ID_ALPHABET, ID_PREFIXES
from ctxmodel.strategies.labels import label
from ctxmodel.strategies.text import filler, pick

__all__ = ["realistic_histories"]

_TOOLS = ("read_file", "execute_command", "apply_diff", "search_files", "list_files", "write_to_file")
_SEED = st.integers(0, 2**31 - 1)


def _env(seed: int, size: int) -> str:
    return ("<environment_details>\n# VSCode Visible Files\n" + filler(seed, size, "env")
            + "\n# Current Time\n2026-01-15T10:00:00Z\n</environment_details>")


def _tool_id(prefix: str, n: int, rng: random.Random) -> str:
    return prefix + f"{n:02d}" + "".join(rng.choice(ID_ALPHABET) for _ in range(22))


@st.composite
def _realistic(draw: st.DrawFn, min_messages: int, max_messages: int, id_style: str | None, reasoning: bool,
               defects: bool, condensed: bool, truncated: bool, timestamps: bool) -> list[Msg]:
    """One session: the size and a seed are drawn, the rest follows the field's frequencies.

    Per-turn choices come from ``random.Random(seed)``, not from draws: Hypothesis biases draws
    toward boundary values (a turn kind of 0 every time), which would skew the shape away from the
    measured distribution, and hundreds of turns would spend its choice budget.
    """
    n_messages = draw(st.integers(min_messages, max_messages))
    style = id_style or draw(pick(("call_00", "toolu", "call", "tooluse", "toolu_vrtx")))
    prefix = ID_PREFIXES[style]
    rng = random.Random(draw(_SEED))
    msgs: list[Msg] = [{"role": "user", "content": [
        {"type": "text", "text": "<task>\n" + filler(rng.randrange(2**31), rng.randint(40, 600)) + "\n</task>"},
        {"type": "text", "text": _env(rng.randrange(2**31), rng.randint(300, 2000))},
    ]}]
    n = 0
    while len(msgs) < n_messages:
        n += 1
        seed = rng.randrange(2**31)
        chat = rng.random() < 0.04  # a plain exchange (feedback), else a tool turn
        assistant: list[dict[str, Any]] = []
        if reasoning and rng.random() < 0.95:
            assistant.append({"type": "reasoning", "text": filler(seed + 1, rng.randint(80, 1200))})
        if chat or rng.random() < 0.2:
            assistant.append({"type": "text", "text": filler(seed + 2, rng.randint(20, 600))})
        if chat:
            msgs.append({"role": "assistant", "content": assistant or [{"type": "text", "text": "Done."}]})
            msgs.append({"role": "user", "content": [
                {"type": "text", "text": "<feedback>\n" + filler(seed + 3, rng.randint(10, 300)) + "\n</feedback>"},
                {"type": "text", "text": _env(seed + 4, rng.randint(300, 1500))}]})
            continue
        tid = _tool_id(prefix, n, rng)
        tool = rng.choice(_TOOLS)
        path = f"src/{rng.choice(('app', 'core', 'utils', 'api'))}/{rng.choice(('index', 'task', 'io'))}.ts"
        assistant.append({"type": "tool_use", "id": tid, "name": tool, "input": {"path": path}})
        msgs.append({"role": "assistant", "content": assistant})
        size = rng.random()
        length = rng.randint(1, 400) if size < 0.4 else rng.randint(400, 4000) if size < 0.92 else \
            rng.randint(4000, 40_000)
        body = filler(seed + 5, length, "code" if tool == "read_file" else "prose")
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid,
                                  "content": [{"type": "text", "text": body}] if rng.random() < 0.22 else body}
        user: list[dict[str, Any]] = [result, {"type": "text", "text": _env(seed + 6, rng.randint(300, 1500))}]
        if defects and rng.random() < 0.005:
            user = user[1:]  # the result was lost (interrupted tool, domain §4.1 step 5)
        elif defects and rng.random() < 0.005:
            user.insert(0, {"type": "tool_result", "tool_use_id": _tool_id(prefix, 99, rng), "content": "stale"})
        msgs.append({"role": "user", "content": user})
    if condensed and rng.random() < 0.3 and len(msgs) >= 4:
        cut = 2 * rng.randint(1, len(msgs) // 2 - 1) - 1  # at an assistant message
        for m in msgs[:cut]:
            m["condenseParent"] = "cond-1"
        msgs.insert(cut, {"role": "user", "isSummary": True, "condenseId": "cond-1", "content": [
            {"type": "text", "text": SUMMARY_PREFIX + filler(seed, rng.randint(500, 4000))}]})
    if truncated and rng.random() < 0.3 and len(msgs) >= 4:
        start = next(i for i, m in enumerate(msgs) if "condenseParent" not in m)
        # first kept visible + assistant/user pairs, never the last message (contract §4.3)
        s = start + 1 if msgs[start + 1]["role"] == "assistant" else start + 2
        pairs = (len(msgs) - 1 - s) // 2
        if pairs >= 1:
            e = s + 2 * rng.randint(1, pairs)
            e = min(e, len(msgs) - 1)
            for m in msgs[s:e]:
                m["truncationParent"] = "trunc-1"
            msgs.insert(e, {"role": "user", "content": marker_text(e - s), "isTruncationMarker": True,
                            "truncationId": "trunc-1"})
    if timestamps:
        for i, m in enumerate(msgs):
            m["ts"] = TS_BASE + 1000 * i
    label(msgs, prefix="realistic")
    return msgs


def realistic_histories(
    *,
    min_messages: int = 100,
    max_messages: int = 400,
    id_style: str | None = None,
    reasoning: bool = True,
    defects: bool = True,
    condensed: bool = True,
    truncated: bool = True,
    timestamps: bool = True,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Hundreds of messages shaped like a real session (domain §1.4), for scale and recovery runs.

    ``reasoning`` puts Zoo's ``reasoning`` blocks first in assistant messages (an unknown block
    type, 0 tokens); ``defects`` loses or orphans about one result in 200; ``condensed`` and
    ``truncated`` hide a prefix behind a summary or a marker now and then; ``id_style`` fixes the
    id style (default: one drawn per history, ``call_00`` first as in the real file).
    """
    if min_messages < 1 or max_messages < min_messages:
        raise ValueError(f"realistic_histories: need 1 <= min_messages <= max_messages, got {min_messages}, "
                         f"{max_messages}")
    return _realistic(min_messages, max_messages, id_style, reasoning, defects, condensed, truncated, timestamps)
