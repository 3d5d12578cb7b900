"""The history model: frozen values for messages and blocks (contract §1).

Every class keeps the keys it does not know in ``extra`` (blocks) or ``meta`` (messages) so that
``dump(load(x)) == x`` holds for anything the stored format allows. Nested JSON values (``input``,
``source``, unknown keys) are plain JSON containers owned by the model: nobody mutates them, the
codec copies them at the boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

__all__ = [
    "EMPTY",
    "Block",
    "History",
    "Image",
    "Message",
    "Opaque",
    "RedactedThinking",
    "Role",
    "Text",
    "Thinking",
    "ToolResult",
    "ToolUse",
]

JSON: TypeAlias = Any
Role: TypeAlias = Literal["user", "assistant"]

#: The shared empty mapping used for "no unknown keys".
EMPTY: Mapping[str, JSON] = MappingProxyType({})


@attrs.frozen
class Text:
    text: str
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["text"] = attrs.field(default="text", init=False)


@attrs.frozen
class Image:
    source: Mapping[str, JSON]
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["image"] = attrs.field(default="image", init=False)

    @property
    def data(self) -> str | None:
        """The base64 payload when the source carries one (token rule of contract §5)."""
        data = self.source.get("data")
        return data if isinstance(data, str) else None


@attrs.frozen
class ToolUse:
    id: str
    name: str
    input: JSON
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["tool_use"] = attrs.field(default="tool_use", init=False)


@attrs.frozen
class Thinking:
    thinking: str
    #: ``None`` when the stored block has no ``signature`` key.
    signature: str | None = None
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["thinking"] = attrs.field(default="thinking", init=False)


@attrs.frozen
class RedactedThinking:
    data: str
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["redacted_thinking"] = attrs.field(default="redacted_thinking", init=False)


@attrs.frozen
class Opaque:
    """A block of a type we do not model (``document``, ``reasoning``, ``server_tool_use``, ...)."""

    type: str
    #: Every key but ``type``, in stored order.
    fields: Mapping[str, JSON] = EMPTY


#: A ``tool_result`` content item is one of these too (text, image, or anything else opaque).
Block: TypeAlias = "Text | Image | ToolUse | ToolResult | Thinking | RedactedThinking | Opaque"


@attrs.frozen
class ToolResult:
    tool_use_id: str
    #: A string, a tuple of items, or ``None`` when the stored block has no ``content`` key.
    content: str | tuple[Block, ...] | None = None
    #: ``None`` when the stored block has no ``is_error`` key.
    is_error: bool | None = None
    extra: Mapping[str, JSON] = EMPTY
    type: Literal["tool_result"] = attrs.field(default="tool_result", init=False)


@attrs.frozen
class Message:
    role: Role
    content: str | tuple[Block, ...]
    #: Every key but ``role`` and ``content`` (``ts``, ``isSummary``, unknown keys...), stored order.
    meta: Mapping[str, JSON] = EMPTY

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The content as blocks; string content reads as one text block (domain §4.6, D7)."""
        if isinstance(self.content, str):
            return (Text(self.content),)
        return self.content

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        if isinstance(self.content, str):
            return ()
        return tuple(b for b in self.content if isinstance(b, ToolUse))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        if isinstance(self.content, str):
            return ()
        return tuple(b for b in self.content if isinstance(b, ToolResult))

    @property
    def ts(self) -> int | float | None:
        value = self.meta.get("ts")
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def is_summary(self) -> bool:
        return self.meta.get("isSummary") is True

    @property
    def is_truncation_marker(self) -> bool:
        return self.meta.get("isTruncationMarker") is True

    def _str_meta(self, key: str) -> str | None:
        value = self.meta.get(key)
        return value if isinstance(value, str) else None

    @property
    def condense_id(self) -> str | None:
        return self._str_meta("condenseId")

    @property
    def condense_parent(self) -> str | None:
        return self._str_meta("condenseParent")

    @property
    def truncation_id(self) -> str | None:
        return self._str_meta("truncationId")

    @property
    def truncation_parent(self) -> str | None:
        return self._str_meta("truncationParent")

    def with_content(self, content: str | tuple[Block, ...]) -> Message:
        return attrs.evolve(self, content=content)

    def with_meta(self, **changes: JSON) -> Message:
        """A copy whose metadata has ``changes`` applied (existing keys keep their position)."""
        meta = dict(self.meta)
        meta.update(changes)
        return attrs.evolve(self, meta=MappingProxyType(meta))


History: TypeAlias = tuple[Message, ...]
