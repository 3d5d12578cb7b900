"""Hypothesis strategies drawing JSON-ready conversation histories (contract §1).

Public API (pinned in HACKING.md): ``histories``, ``well_formed_histories``, ``recovery_requests``,
``texts``, ``realistic_histories``; drawn cell first (``ctxmodel.partition``):
``recovery_requests(cells=...)``, ``effective_histories``, ``normalize_histories``; plus
``features`` (what a history has) for tests and reports.
A history is a ``list`` of message ``dict``s exactly as a target receives it: strict JSON, text
without lone surrogates, so ``ctxmodel.codec.load`` accepts every one.
"""

from ctxmodel.strategies.cells import effective_histories, normalize_histories
from ctxmodel.strategies.histories import histories, well_formed_histories
from ctxmodel.strategies.labels import FEATURES, features
from ctxmodel.strategies.realistic import realistic_histories
from ctxmodel.strategies.recovery import RECOVERY_CASES, recovery_case, recovery_requests
from ctxmodel.strategies.text import texts

__all__ = [
    "FEATURES",
    "RECOVERY_CASES",
    "effective_histories",
    "features",
    "histories",
    "normalize_histories",
    "realistic_histories",
    "recovery_case",
    "recovery_requests",
    "texts",
    "well_formed_histories",
]
