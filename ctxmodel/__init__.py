"""ctxmodel: a reference model and property gate for LLM-agent conversation-history code.

The public API is the stored format (``load``, ``dump`` and the model) and the reference's
operations on it, the ones the pinned interfaces in HACKING.md name: ``effective`` and
``visible_mask`` (contract §2), ``normalize`` and ``normalize_report`` (§3), ``recover`` (§4),
``get_counter`` and ``request_tokens`` (§5), ``validate`` (§6), ``repair`` and ``render``.

Four of them share their module's name: after ``import ctxmodel``, ``ctxmodel.normalize``,
``ctxmodel.recover``, ``ctxmodel.repair`` and ``ctxmodel.render`` are the functions, so the modules
are reached with ``from ctxmodel.recover import ...`` or ``importlib.import_module``, not with
``import ctxmodel.recover as m`` (which resolves the package's attribute). That is why they are
bound here at import: bound on first use, a module imported before them would take the name. These
modules are pure and load neither Hypothesis nor a tokenizer; the counter's names, which would load
tiktoken, are loaded on first use (PEP 562), like ``ctxmodel.tokens`` itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ctxmodel.codec import dump, dumps, load, loads, read, write
from ctxmodel.errors import CtxmodelError, HistoryError
from ctxmodel.model import History, Message
from ctxmodel.normalize import NormalizeReport, normalize, normalize_report
from ctxmodel.oracle import Violation, validate
from ctxmodel.recover import Degraded, Recovery, allowed_tokens, recover
from ctxmodel.render import render
from ctxmodel.repair import RepairReport, repair
from ctxmodel.visibility import effective, visible_mask

if TYPE_CHECKING:
    from ctxmodel.tokens import Counter, get_counter, request_tokens

__all__ = [
    "Counter",
    "CtxmodelError",
    "Degraded",
    "History",
    "HistoryError",
    "Message",
    "NormalizeReport",
    "Recovery",
    "RepairReport",
    "Violation",
    "allowed_tokens",
    "dump",
    "dumps",
    "effective",
    "get_counter",
    "load",
    "loads",
    "normalize",
    "normalize_report",
    "read",
    "recover",
    "render",
    "repair",
    "request_tokens",
    "validate",
    "visible_mask",
    "write",
]

__version__ = "0.1.0"

#: Names loaded on first use, and the module that defines them.
_LAZY = {"Counter": "ctxmodel.tokens", "get_counter": "ctxmodel.tokens", "request_tokens": "ctxmodel.tokens"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
