"""Histories at the size and shape of real agent sessions (domain §1.4).

The real Zoo-Code task of domain §1.4 has 516 messages: nearly every user message is
``[tool_result, text(<environment_details>...)]``, about one tool pair per turn, most assistant
messages open with a ``reasoning`` block, a fifth of results hold list content. Drawing that much
text character by character would overrun Hypothesis's choice budget, so each block draws only a
size and a seed, and its text is sliced from a fixed corpus (``strategies.text.filler``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from strategies.histories import SUMMARY_PREFIX, TS_BASE, marker_text
from strategies.ids import ID_ALPHABET, ID_PREFIXES
from strategies.labels import label
from strategies.text import filler

__all__ = ["realistic_histories"]

Msg = dict[str, Any]
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
    n_messages = draw(st.integers(min_messages, max_messages))
    style = id_style or draw(st.sampled_from(("call_00", "toolu", "call", "tooluse", "toolu_vrtx")))
    prefix = ID_PREFIXES[style]
    rng = random.Random(draw(_SEED))
    msgs: list[Msg] = [{"role": "user", "content": [
        {"type": "text", "text": "<task>\n" + filler(draw(_SEED), draw(st.integers(40, 600))) + "\n</task>"},
        {"type": "text", "text": _env(draw(_SEED), draw(st.integers(300, 2000)))},
    ]}]
    n = 0
    while len(msgs) < n_messages:
        n += 1
        seed = draw(_SEED)
        kind = draw(st.integers(0, 99))  # 0..3: a plain chat turn; else a tool turn
        assistant: list[dict[str, Any]] = []
        if reasoning and draw(st.integers(0, 99)) < 95:
            assistant.append({"type": "reasoning", "text": filler(seed + 1, draw(st.integers(80, 1200)))})
        if kind < 4 or draw(st.integers(0, 99)) < 20:
            assistant.append({"type": "text", "text": filler(seed + 2, draw(st.integers(20, 600)))})
        if kind < 4:
            msgs.append({"role": "assistant", "content": assistant or [{"type": "text", "text": "Done."}]})
            msgs.append({"role": "user", "content": [
                {"type": "text", "text": "<feedback>\n" + filler(seed + 3, draw(st.integers(10, 300)))
                 + "\n</feedback>"},
                {"type": "text", "text": _env(seed + 4, draw(st.integers(300, 1500)))}]})
            continue
        tid = _tool_id(prefix, n, rng)
        tool = rng.choice(_TOOLS)
        path = f"src/{filler(seed, 8, 'code').strip() or 'a'}.ts".replace(" ", "_").replace("\n", "_")
        assistant.append({"type": "tool_use", "id": tid, "name": tool, "input": {"path": path}})
        msgs.append({"role": "assistant", "content": assistant})
        size = draw(st.integers(0, 99))
        length = draw(st.integers(1, 400)) if size < 40 else draw(st.integers(400, 4000)) if size < 90 else \
            draw(st.integers(4000, 40_000))
        body = filler(seed + 5, length, "code" if tool == "read_file" else "prose")
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid}
        if draw(st.integers(0, 99)) < 22:
            result["content"] = [{"type": "text", "text": body}]
        else:
            result["content"] = body
        user: list[dict[str, Any]] = [result, {"type": "text", "text": _env(seed + 6, draw(st.integers(300, 1500)))}]
        if defects and draw(st.integers(0, 199)) == 0:
            user = user[1:]  # the result was lost (interrupted tool, domain §4.1 step 5)
        elif defects and draw(st.integers(0, 199)) == 0:
            user.insert(0, {"type": "tool_result", "tool_use_id": _tool_id(prefix, 99, rng), "content": "stale"})
        msgs.append({"role": "user", "content": user})
    if condensed and draw(st.integers(0, 99)) < 30:
        cut = 2 * draw(st.integers(1, max(1, len(msgs) // 2 - 1))) - 1  # at an assistant message
        for m in msgs[:cut]:
            m["condenseParent"] = "cond-1"
        msgs.insert(cut, {"role": "user", "isSummary": True, "condenseId": "cond-1", "content": [
            {"type": "text", "text": SUMMARY_PREFIX + filler(draw(_SEED), draw(st.integers(500, 4000)))}]})
    if truncated and draw(st.integers(0, 99)) < 30:
        start = next(i for i, m in enumerate(msgs) if "condenseParent" not in m)
        span = len(msgs) - start - 1
        if span >= 3:
            hide = 2 * draw(st.integers(1, span // 2 - 1 if span // 2 > 1 else 1))
            s = start + 1 + (1 if msgs[start + 1]["role"] == "user" else 0)
            e = min(s + hide, len(msgs) - 1)
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
