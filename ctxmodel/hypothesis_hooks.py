"""Every private Hypothesis hook ctxmodel relies on, in one place (``tests/test_hypothesis_hooks.py``
fails when a Hypothesis release renames one).

They exist for three needs the public API does not meet: a test function built at run time needs its
own database key (the body's source is shared by every property and target), its own seed without
``hypothesis.seed()`` switching the database off (harness-lessons pitfall 4), and a run must be
replayable from its seed alone, which Hypothesis's mining of literals from loaded modules breaks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["set_database_key", "set_seed", "without_local_constants"]


def set_database_key(test: Any, key: str) -> None:
    """Distinct database entries per property and target: in a shared database one target's stored
    failures must not be replayed (and deleted as fixed) by a run against another."""
    test._hypothesis_internal_add_digest = key.encode()


def set_seed(test: Any, seed: int) -> None:
    """``hypothesis.seed()`` without its side effect of ``database=None``."""
    test._hypothesis_internal_use_seed = seed


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Keep Hypothesis from mining literals out of whatever modules happen to be imported.

    Hypothesis draws, now and then, constants collected from every local module in ``sys.modules``,
    so the same seed drew different examples depending on what ran before in the process, and a
    verdict could change with the order properties ran in. The local pool is empty for the duration;
    Hypothesis's own global constants stay. When the hook is missing this does nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module
        yield
        return
    getter = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if getter is None or cache is None:  # pragma: no cover - a Hypothesis without constant mining
        yield
        return
    empty = type(providers._local_constants)()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = getter
        cache.cache.clear()
