"""The policies a target may declare (contract §3, §4, §10): what the properties follow, never guess.

Every layer is checked where it comes from (contract §7): a ``describe`` reply at the handshake
(a start error, exit 3), ``--policy`` on the command line (a usage error, exit 2). An unknown key or
value is refused in one line with a "did you mean" and what is accepted, never silently run with
the default in its place (``--policy orphan=to_text`` used to run ``orphans=drop`` and pass).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from ctxmodel.errors import UsageError

__all__ = ["CHOICES", "DEFAULTS", "PATTERNS", "Policies", "check_policies", "check_policy", "did_you_mean", "resolve"]

Policies = Mapping[str, str]

#: Each policy, its allowed values; the first is the contract's default.
CHOICES: dict[str, tuple[str, ...]] = {
    "orphans": ("drop", "to_text", "any", "relabel"),
    "trailing": ("leave", "close"),
    "resultOrder": ("any", "tool_use"),
    "recoverSuccess": ("fits", "converges"),
    "inputs": ("any", "agent-stored", "untagged"),
    "mergeUsers": ("no", "yes"),
    # The format a target's messages are in (contract §7): declared as describe's own "dialect",
    # carried with the policies because they are what reaches the strategies and the checks.
    "dialect": ("anthropic", "openai-chat", "openai-responses", "bedrock-converse", "gemini"),
    # Request-time trimming (contract §10).
    "trimSystem": ("keep", "first", "any"),
    "trimLastUser": ("keep", "any"),
    "trimPartial": ("no", "yes"),
    "trimBudget": ("tokens", "none"),
    "trimToolCalls": ("keep", "pairs"),
    "trimPlaceholder": ("none", "one"),
    # A late result put back after its call (Google ADK's contents).
    "lateResults": ("stay", "rejoin"),
    # Reasoning travels with its item (contract §10.8).
    "trimReasoning": ("keep", "strip"),
    "reasoningRequired": ("no", "current-turn"),
    # What a trimmer keeps when it must drop (contract §10.9) and what a pruner's options remove (§10.10).
    "trimKeep": ("newest", "oldest", "any"),
    "pruneCalls": ("no", "all", "before-last-message", "before-last-N-messages"),
    "pruneReasoning": ("no", "all", "before-last-message"),
}

#: The values a choice spelled with ``N`` stands for (the Vercel AI SDK's ``before-last-3-messages``):
#: each choice's pattern, ``N`` a whole number from 1.
PATTERNS: dict[str, dict[str, re.Pattern[str]]] = {
    "pruneCalls": {"before-last-N-messages": re.compile(r"before-last-([1-9][0-9]*)-messages")},
}

DEFAULTS: dict[str, str] = {key: values[0] for key, values in CHOICES.items()}


def did_you_mean(text: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice (difflib), or ``""`` when none is close."""
    options = list(choices)
    close = difflib.get_close_matches(text, options, n=1, cutoff=0.6)
    if not close:  # case slips ("ToolUse", "TO_TEXT") are the commonest
        close = [c for c in options if c.lower() == text.lower()][:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_policy(key: object, value: object, where: str) -> tuple[str, str]:
    """One ``key=value``, checked: ``UsageError("{where}: ...")`` naming what is accepted."""
    if not isinstance(key, str) or key not in CHOICES:
        shown = key if isinstance(key, str) else repr(key)
        hint = did_you_mean(shown, CHOICES) if isinstance(key, str) else ""
        raise UsageError(f"{where}: unknown policy {shown!r}{hint}; expected one of {', '.join(CHOICES)}")
    if not isinstance(value, str):
        raise UsageError(f"{where}: {key}: expected a string, one of {'|'.join(CHOICES[key])}; got {value!r}")
    patterns = PATTERNS.get(key, {})
    if (value not in CHOICES[key] or value in patterns) and not any(p.fullmatch(value) for p in patterns.values()):
        hint = "" if value in patterns else did_you_mean(value, CHOICES[key])
        spelled = ", N a whole number from 1" if patterns else ""
        raise UsageError(
            f"{where}: {key}={value}: unknown value{hint}; expected one of {'|'.join(CHOICES[key])}{spelled}")
    return key, value


def check_policies(layer: object, where: str) -> dict[str, str]:
    """A whole layer (an object of policies), checked key by key."""
    if not isinstance(layer, Mapping):
        raise UsageError(f"{where}: expected an object of policies, got {type(layer).__name__}")
    return dict(check_policy(key, value, where) for key, value in layer.items())


def resolve(*layers: Mapping[str, object] | None) -> dict[str, str]:
    """Defaults, overridden by each layer in turn (``describe``, then ``--policy``).

    Layers are normally checked where they came from already; an unknown key or value still found
    here is refused (``UsageError``), never kept or ignored.
    """
    out: dict[str, str] = dict(DEFAULTS)
    for layer in layers:
        out.update(check_policies(layer or {}, "policy"))
    return out


def parse_pairs(pairs: Iterable[str], where: str = "--policy") -> dict[str, str]:
    """``KEY=VALUE`` pairs from a command line, each checked like any other layer (exit 2)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{where} {pair!r}: expected KEY=VALUE, e.g. orphans=to_text")
        checked_key, checked_value = check_policy(key.strip(), value.strip(), where)
        out[checked_key] = checked_value
    return out


def split_csv(values: Iterable[str]) -> list[str]:
    """Repeatable, comma-separated option values as one list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
