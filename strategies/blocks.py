"""Content blocks as the stored format holds them (contract §1; domain §1.2), as JSON dicts.

Each strategy draws one block ``dict``. Unknown keys and unknown block types are drawn on purpose:
loading must be lossless for them (contract §1) and normalization must keep them (contract §3.6).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from hypothesis import strategies as st

from ctxmodel.strategies.text import WORDS, chance, memo, pick, texts

__all__ = [
    "BLOCK_EXTRA_KEYS",
    "KNOWN_BLOCK_TYPES",
    "META_EXTRA_KEYS",
    "image_blocks",
    "json_inputs",
    "redacted_thinking_blocks",
    "serialization_inputs",
    "text_blocks",
    "thinking_blocks",
    "tool_names",
    "tool_result_blocks",
    "tool_use_blocks",
    "unknown_blocks",
]

KNOWN_BLOCK_TYPES = frozenset({"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"})

#: Keys real files carry on blocks that the model does not know (kept verbatim, contract §1).
BLOCK_EXTRA_KEYS: tuple[tuple[str, Any], ...] = (
    ("cache_control", {"type": "ephemeral"}),
    ("citations", None),
    ("x_custom", [1, "two", {"three": 3.5}]),
)
#: Message metadata keys beyond the ones contract §1 names (domain §1.1: Zoo's ``messageId``,
#: reasoning fields, provider response ``id``), plus one nobody knows.
META_EXTRA_KEYS: tuple[tuple[str, Any], ...] = (
    ("messageId", "legacy:1700000000000:0"),
    ("reasoning_content", "thinking about it"),
    ("id", "resp_abc123"),
    ("reasoning_details", [{"type": "reasoning.text", "text": "hm"}]),
    ("x-unknown", {"nested": [True, None, 1.5]}),
)

_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@memo
def tool_names() -> st.SearchStrategy[str]:
    return pick(("read_file", "execute_command", "write_to_file", "apply_diff", "search_files",
                 "list_files", "attempt_completion", "ask_followup_question"))


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    # Integral floats and big exponents: where JS JSON.stringify and Python differ (domain §4.6).
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    texts(max_size=20),
)


#: Numbers JS ``JSON.stringify`` writes unlike Python's ``json``: a stored ``100.0`` is ``100`` to JS, and
#: exponents switch at other magnitudes (``1e21``, ``1.5e-7``) with another notation.
_JS_NUMBERS = (0.0, 1.0, 100.0, -2.0, 1e21, 1e20, 1.5e-7, 0.000001, 2.5e300, -0.0, 5e-324)


@memo
def serialization_inputs() -> st.SearchStrategy[dict[str, Any]]:
    """A ``tool_use`` input made of what the count's serialization turns on (contract §5, domain §4.6):
    numbers JS writes unlike Python, integer-like keys (JS writes them first, ascending), non-ASCII and
    control characters in strings, nesting."""
    keys = st.one_of(pick(("path", "offset", "limit", "1", "10", "2", "-1", "01")), texts(max_size=6))
    scalars = st.one_of(pick(_JS_NUMBERS), st.floats(allow_nan=False, allow_infinity=False),
                        st.integers(-(2**53), 2**53), texts(max_size=20, kinds=("unicode", "emoji", "prose")))
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                          max_leaves=6)
    return st.dictionaries(keys, values, min_size=1, max_size=4)


@memo
def json_inputs() -> st.SearchStrategy[Any]:
    """A ``tool_use`` input: an object, usually shaped like a real tool call, sometimes arbitrary JSON."""
    plain = st.fixed_dictionaries(
        {"path": pick(("src/a.ts", "README.md", "x.py"))},
        optional={"line_range": pick(("1-20", "5")), "command": texts(max_size=20)},
    )
    # Integer-like keys: JS orders them first when stringifying (contract §5).
    keys = st.one_of(pick(WORDS), pick(("1", "10", "2", "-1", "01")), texts(max_size=6))
    arbitrary = st.dictionaries(
        keys,
        st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                     max_leaves=6),
        max_size=4,
    )
    return chance(15).flatmap(lambda odd: arbitrary if odd else plain)


@memo
@st.composite
def _extra_keys(draw: st.DrawFn, percent: int, pool: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    if not draw(chance(percent)):
        return {}
    key, value = pool[draw(st.integers(0, len(pool) - 1))]  # values are unhashable: no cached pick
    return {key: copy.deepcopy(value)}  # fresh: a mutating target must not poison later examples


@memo
def block_extras(percent: int) -> st.SearchStrategy[dict[str, Any]]:
    return _extra_keys(percent, BLOCK_EXTRA_KEYS)


@memo
def meta_extras(percent: int) -> st.SearchStrategy[dict[str, Any]]:
    return _extra_keys(percent, META_EXTRA_KEYS)


@memo
@st.composite
def text_blocks(
    draw: st.DrawFn, *, text: st.SearchStrategy[str] | None = None, extra_percent: int = 0
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": draw(text if text is not None else texts(nonblank=True))}
    block.update(draw(block_extras(extra_percent)))
    return block


@memo
@st.composite
def image_blocks(draw: st.DrawFn, *, max_bytes: int = 48, url_percent: int = 15) -> dict[str, Any]:
    """A base64 image (the token rule reads ``len(data)``, contract §5) or, now and then, a URL image."""
    if draw(chance(url_percent)):
        return {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    raw = draw(st.binary(min_size=1, max_size=max_bytes))
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": draw(pick(_MEDIA_TYPES)),
            "data": base64.b64encode(raw).decode("ascii"),
        },
    }


@memo
@st.composite
def tool_use_blocks(draw: st.DrawFn, tool_id: str, *, extra_percent: int = 0) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_use", "id": tool_id, "name": draw(tool_names()), "input": draw(json_inputs()),
    }
    block.update(draw(block_extras(extra_percent)))
    return block


#: ``tool_result`` content forms, in shrink order: both forms occur in real files (domain §1.4).
RESULT_FORMS: tuple[str, ...] = ("string", "list", "absent", "list-image")


@memo
@st.composite
def tool_result_blocks(
    draw: st.DrawFn,
    tool_id: str,
    *,
    forms: tuple[str, ...] = RESULT_FORMS,
    is_error: bool = True,
    text: st.SearchStrategy[str] | None = None,
    extra_percent: int = 0,
) -> dict[str, Any]:
    """A result for ``tool_id``: string, list (text items, maybe an image) or absent content."""
    body = text if text is not None else texts()
    form = draw(pick(forms))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id}
    if form == "string":
        block["content"] = draw(body)
    elif form == "list":
        block["content"] = [{"type": "text", "text": t} for t in draw(st.lists(body, min_size=1, max_size=2))]
    elif form == "list-image":
        items: list[dict[str, Any]] = [draw(image_blocks())]
        if draw(st.booleans()):
            items.insert(0, {"type": "text", "text": draw(body)})
        block["content"] = items
    if is_error and draw(chance(15)):
        block["is_error"] = draw(chance(70))
    block.update(draw(block_extras(extra_percent)))
    return block


@memo
@st.composite
def thinking_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """A thinking block as Zoo stores it (with a signature, domain §1.2); must round-trip verbatim."""
    return {"type": "thinking", "thinking": draw(texts(nonblank=True)), "signature": draw(pick(
        ("sig", "EqQBCkgIARABGAIiQL2s", "ErUBCkYIBBgCIkB")))}


@memo
@st.composite
def redacted_thinking_blocks(draw: st.DrawFn) -> dict[str, Any]:
    raw = draw(st.binary(min_size=1, max_size=24))
    return {"type": "redacted_thinking", "data": base64.b64encode(raw).decode("ascii")}


@memo
@st.composite
def unknown_blocks(draw: st.DrawFn, role: str = "assistant") -> dict[str, Any]:
    """A block type the model does not know (domain §1.2: ``reasoning``, ``document``, Gemini signatures...)."""
    options: list[dict[str, Any]] = [
        {"type": "reasoning", "text": "thinking", "summary": []},
        {"type": "thoughtSignature", "thoughtSignature": "c2ln"},
        {"type": "x_custom_block", "payload": {"a": [1, 2]}},
    ]
    if role == "user":
        options = [
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}},
            {"type": "x_custom_block", "payload": {"a": [1, 2]}},
        ]
    return copy.deepcopy(options[draw(st.integers(0, len(options) - 1))])  # dicts: no cached pick
