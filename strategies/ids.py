"""Tool ids in every style the field produces (domain §1.2), and the bad ones the API rejects.

Ids shrink toward ``toolu_a``: the style is drawn first from a list that starts with ``toolu`` and
the suffix from an alphabet that starts with ``a``, so a minimal failing history stays readable.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from ctxmodel.strategies.text import chance, memo, pick

__all__ = ["BAD_ID_CHARS", "ID_ALPHABET", "ID_PREFIXES", "ID_STYLES", "id_style", "make_unique", "tool_ids"]

#: Every id prefix seen in stored files (domain §1.2), shortest-to-shrink first.
ID_PREFIXES: dict[str, str] = {
    "toolu": "toolu_",
    "call": "call_",
    "tooluse": "tooluse_",
    "toolu_vrtx": "toolu_vrtx_",
    "call_00": "call_00_",
    "srvtoolu": "srvtoolu_",
}
ID_STYLES: tuple[str, ...] = tuple(ID_PREFIXES)
ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: Characters outside ``[a-zA-Z0-9_-]`` that real ids carry (Kimi ``functions.read:0``, MCP names,
#: Responses ``call_x|fc_y``): the API rejects them (domain §5.1 "id charset"), A5 needs them drawn.
BAD_ID_CHARS = ".:|/ @+é"
#: Whole bad ids seen in the field, drawn verbatim now and then.
_FIELD_BAD_IDS = ("functions.read_file:0", "call_abc|fc_123", "mcp/github/get_issue", "tool use 1")

_GOOD_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def id_style(tool_id: str) -> str:
    """The style of an id, ``"bad"`` when the API's pattern rejects it (longest prefix wins)."""
    if not _GOOD_ID.match(tool_id):
        return "bad"
    best = ""
    for style, prefix in ID_PREFIXES.items():
        if tool_id.startswith(prefix) and len(prefix) > len(ID_PREFIXES.get(best, "")):
            best = style
    return best or "other"


@memo
@st.composite
def tool_ids(
    draw: st.DrawFn,
    *,
    styles: tuple[str, ...] = ID_STYLES,
    bad: bool = True,
    bad_percent: int = 6,
    max_suffix: int = 24,
) -> str:
    """One id. Real suffixes are ~24 base62 characters; shrinking keeps one (``toolu_a``)."""
    style = draw(pick(styles))
    # One integer draw, spelled in base 62: cheap to generate, and it shrinks to 0, spelled "a".
    suffix = _base62(draw(st.integers(0, len(ID_ALPHABET) ** max_suffix - 1)))
    tool_id = ID_PREFIXES[style] + suffix
    if bad and draw(chance(bad_percent)):
        if draw(chance(25)):
            return draw(pick(_FIELD_BAD_IDS))
        char = draw(pick(BAD_ID_CHARS))
        where = draw(st.integers(0, len(suffix)))
        cut = len(ID_PREFIXES[style]) + where
        tool_id = tool_id[:cut] + char + tool_id[cut:]
    return tool_id


def _base62(n: int) -> str:
    digits = []
    while True:
        n, r = divmod(n, len(ID_ALPHABET))
        digits.append(ID_ALPHABET[r])
        if n == 0:
            return "".join(reversed(digits))


def make_unique(tool_id: str, used: set[str]) -> str:
    """``tool_id``, or the first of ``tool_id2``, ``tool_id3``... not in ``used``; records the result.

    Uniqueness by construction (not by ``filter``) keeps generation cheap and shrinking smooth: two
    ids that shrink to ``toolu_a`` become ``toolu_a`` and ``toolu_a2``.
    """
    candidate, n = tool_id, 1
    while candidate in used:
        n += 1
        candidate = f"{tool_id}{n}"
    used.add(candidate)
    return candidate
