"""ctxmodel: a reference model and property gate for LLM-agent conversation-history code.

The public API is the stored format (``load``, ``dump`` and the model) and the reference's
operations on it, the ones the pinned interfaces in HACKING.md name: ``effective`` and
``visible_mask`` (contract §2), ``normalize`` and ``normalize_report`` (§3), ``recover`` (§4),
``get_counter`` and ``request_tokens`` (§5), ``validate`` (§6), ``repair`` and ``render``; and the
harness as a library: the ``check`` decorator (with ``Finding`` and ``Witness``) that registers a
property, ``open_target`` for a target spec, and the engine's ``run`` with its ``RunConfig``,
``get_profile`` and the ``GateReport`` it returns (what ``ctxmodel check`` and the pytest plugin call).

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
    from ctxmodel.engine import run
    from ctxmodel.profiles import get_profile
    from ctxmodel.properties.catalogue import Finding, Witness, check
    from ctxmodel.results import GateReport
    from ctxmodel.runs import RunConfig
    from ctxmodel.targets.spec import open_target
    from ctxmodel.tokens import Counter, get_counter, request_tokens

__all__ = [
    "Counter",
    "CtxmodelError",
    "Degraded",
    "Finding",
    "GateReport",
    "History",
    "HistoryError",
    "Message",
    "NormalizeReport",
    "Recovery",
    "RepairReport",
    "RunConfig",
    "Violation",
    "Witness",
    "allowed_tokens",
    "check",
    "dump",
    "dumps",
    "effective",
    "get_counter",
    "get_profile",
    "load",
    "loads",
    "normalize",
    "normalize_report",
    "open_target",
    "read",
    "recover",
    "render",
    "repair",
    "request_tokens",
    "run",
    "validate",
    "visible_mask",
    "write",
]

__version__ = "0.1.0"

#: Names loaded on first use, and the module that defines them.
_LAZY = {
    "Counter": "ctxmodel.tokens", "get_counter": "ctxmodel.tokens", "request_tokens": "ctxmodel.tokens",
    "check": "ctxmodel.properties.catalogue", "Finding": "ctxmodel.properties.catalogue",
    "Witness": "ctxmodel.properties.catalogue", "open_target": "ctxmodel.targets.spec", "run": "ctxmodel.engine",
    "RunConfig": "ctxmodel.runs", "GateReport": "ctxmodel.results", "get_profile": "ctxmodel.profiles",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
