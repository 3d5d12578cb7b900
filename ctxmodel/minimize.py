"""Minimizing a failing request after Hypothesis has shrunk it: messages dropped from the JSON itself.

The cell strategies build a request around a drawn pattern (``ctxmodel.strategies.cells``): a last
tool turn, hidden turns, an exchange worth hiding, a budget placed by asking the reference.
Hypothesis shrinks the choices behind them, but it cannot drop a message the construction always
adds, nor a drawn message the budget was placed around. A fixture is read by someone debugging a
failure, and every message it holds should be one the failure needs. So once the shrink is done,
the gate drops messages one or two at a time (a tool turn is two) and the system prompt, keeping a
drop only when the same kind still fails, the way a delta debugger does; a drop that passes, or
fails with another kind, is undone.

The budget fields stay what the failing call was asked, with one exception the caller may offer
(``rebudget``): a drop that no longer fails as it stands is tried once more with the budget lowered
by what the dropped messages counted, so that the rest stays as far over budget as before. Without
it a recovery that needs a cut (a degradation, say) could not lose a message the cut did not need:
the smaller history would fit the old budget and be left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmodel.codec import copy_json

__all__ = ["MAX_TRIALS", "StopMinimizing", "minimize_request"]

#: Calls spent minimizing one kind at most: a few passes over a history of a few dozen messages.
MAX_TRIALS = 200


class StopMinimizing(Exception):
    """Raised by ``fails`` to end the minimizing with what it has (a target that stopped answering)."""


def minimize_request(
    params: dict[str, Any],
    fails: Callable[[dict[str, Any]], bool],
    max_trials: int = MAX_TRIALS,
    rebudget: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """``params`` with every message (and the system prompt) that ``fails`` does not need dropped.

    ``fails`` is asked about fresh copies only; it may raise ``StopMinimizing``. ``rebudget(before,
    after)`` returns ``after`` with its budget moved by what the drop took away, or ``None`` when
    it has none to offer. Requests without a message list come back as they are.
    """
    messages = params.get("messages")
    if not isinstance(messages, list) or not messages:
        return params
    best: dict[str, Any] = copy_json(params)
    trials = 0

    def keeps(candidate: dict[str, Any]) -> bool:
        nonlocal best, trials
        trials += 1
        if fails(copy_json(candidate)):
            best = candidate
            return True
        moved = rebudget(best, candidate) if rebudget is not None else None
        if moved is None or moved == candidate or trials >= max_trials:
            return False
        trials += 1
        if fails(copy_json(moved)):
            best = moved
            return True
        return False

    try:
        if isinstance(best.get("systemPrompt"), str) and best["systemPrompt"]:
            keeps({**best, "systemPrompt": ""})
        changed = True
        while changed and trials < max_trials:
            changed = False
            for size in (2, 1):
                i = len(best["messages"]) - size
                while i >= 0 and trials < max_trials:
                    kept = best["messages"][:i] + best["messages"][i + size :]
                    if kept and keeps({**best, "messages": kept}):
                        changed = True
                        i = min(i - 1, len(kept) - size)
                    else:
                        i -= 1
    except StopMinimizing:
        pass
    return best
