"""A JSON message's content as the classifiers read it: a list of blocks, or none.

The partition classifies whatever a strategy drew or a fixture holds, malformed content included, so
a message whose content is not a list reads as holding no block rather than failing.
"""

from __future__ import annotations

from typing import Any

from ctxmodel.json_types import JsonMessageView as Msg

__all__ = ["blocks_of", "is_block"]


def blocks_of(message: Msg) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def is_block(block: Any, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind
