"""The policies a target may declare (contract §3, §4): what the properties follow, never guess."""

from __future__ import annotations

from collections.abc import Mapping

from ctxmodel.errors import UsageError

__all__ = ["CHOICES", "DEFAULTS", "Policies", "resolve"]

Policies = Mapping[str, str]

#: Each policy, its allowed values; the first is the contract's default.
CHOICES: dict[str, tuple[str, ...]] = {
    "orphans": ("drop", "to_text", "any", "relabel"),
    "trailing": ("leave", "close"),
    "resultOrder": ("any", "tool_use"),
    "recoverSuccess": ("fits", "converges"),
}

DEFAULTS: dict[str, str] = {key: values[0] for key, values in CHOICES.items()}


def resolve(*layers: Mapping[str, object] | None) -> dict[str, str]:
    """Defaults, overridden by each layer in turn (``describe``, then ``--policy``).

    Unknown keys are kept (a target may declare more than we read); known keys must hold one of
    the contract's values.
    """
    out: dict[str, str] = dict(DEFAULTS)
    for layer in layers:
        for key, value in (layer or {}).items():
            if key in CHOICES and value not in CHOICES[key]:
                allowed = "|".join(CHOICES[key])
                raise UsageError(f"policy {key}={value!r}: expected one of {allowed}")
            out[key] = str(value)
    return out
