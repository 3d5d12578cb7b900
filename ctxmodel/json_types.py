"""The JSON view of a stored history: the names the JSON-side code types its messages and blocks with.

The reference reads the attrs model (``ctxmodel.model``); the strategies, the yardsticks and the
partition read and build the JSON value itself (contract §1), and they share these names so that
"a message as JSON" is written once. They are aliases of plain dicts rather than ``TypedDict``s on
purpose: the stored format keeps every key it does not know (contract §1: loading loses nothing),
the strategies draw such keys by the hundred, and a ``TypedDict`` without extra items (which the
project's mypy does not support) refuses every one of them, every key read by a variable and every
``dict`` handed to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

__all__ = ["JsonBlock", "JsonMessage", "JsonMessageView"]

#: One message as JSON, owned by its builder (the strategies draw and rewrite these).
JsonMessage: TypeAlias = dict[str, Any]
#: One content block (or ``tool_result`` content item) as JSON.
JsonBlock: TypeAlias = dict[str, Any]
#: A message read but never written: what a judge or the partition is handed.
JsonMessageView: TypeAlias = Mapping[str, Any]
