"""Exact byte-pair encoding of one long pre-tokenizer piece, in rounds of C-speed string replaces.

Why: tiktoken's BPE over one piece costs more per byte the longer the piece (4 MB of one repeated
character takes about 13x as long as 4 MB of prose; contract §5 asks for bounded time). Such
pieces are runs: one repeated character, a line of ``=``, megabytes of CJK without punctuation.

What tiktoken computes (``_byte_pair_merge``): start from single bytes; repeatedly merge the
adjacent pair whose concatenation has the lowest rank, the leftmost on ties, until no adjacent
pair is a token. We compute the same thing in *rounds*. A round takes the lowest rank ``r`` over
all adjacent pairs and merges, left to right, every non-overlapping pair of rank ``r`` (several
pair kinds can share ``r``: one token, split in different places). A round equals the next steps
of tiktoken's loop provided no merge in it creates a pair of rank below ``r``:

- tiktoken merges the leftmost ``r`` pair first. The pairs that merge creates have rank > ``r``
  (checked), and a created pair cannot have rank ``r`` (its bytes are longer than the token of
  rank ``r``), so the next minimum is again ``r`` and the leftmost such pair is the next
  non-overlapping occurrence: exactly the left-to-right scan of ``str.replace`` / ``re.sub``.
- A created pair is either one that survives the round (checked by requiring the next round's
  minimum to be > ``r``: every pair of rank <= ``r`` left after the round would have to be
  created, since old ``r`` pairs were merged or overlapped a merge), or the merged part with a
  right neighbour that starts the next merge of the same round (checked up front: wherever two
  kinds of rank ``r`` occur back to back, ``rank(merged + first part of the second) > r``).

If either check fails, or the piece has too many distinct parts for the scan below, we return
``None`` and the caller uses tiktoken itself: never a guess, only a slower exact answer.

Representation: the piece as a ``str``, one character per part (bytes as U+0000..U+00FF, tokens
as ``_OFFSET + rank``), so finding and merging pairs are ``str`` searches and replaces in C.
Runs shrink geometrically, so a 4 MB run costs a handful of passes over the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import product

__all__ = ["LongPieceBPE"]

#: Token ``t`` is the character ``chr(_OFFSET + t)``: above the byte range, below the surrogates
#: would be too tight for 200k tokens, so above them (plane 2 onwards) — never a surrogate.
_OFFSET = 0x20000
#: Above this many distinct parts a round finds pairs by a full scan instead of k*k searches.
_DISTINCT_SEARCH = 24
#: Above this many distinct adjacent pairs the piece is not a run: leave it to tiktoken.
_MAX_PAIR_KINDS = 4096
#: Bound of the pair-rank memo.
_MAX_CACHED_PAIRS = 1 << 18


class LongPieceBPE:
    """Exact tiktoken BPE for long pieces that are runs; ``None`` when it cannot vouch for one."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self._ranks = ranks
        self._bytes: dict[str, bytes] = {chr(b): bytes([b]) for b in range(256)}
        self._pair_rank: dict[str, int | None] = {}

    def _part_bytes(self, ch: str) -> bytes:
        got = self._bytes.get(ch)
        if got is None:
            got = self._bytes[ch] = self._token_bytes(ord(ch) - _OFFSET)
        return got

    def _token_bytes(self, rank: int) -> bytes:
        # Built lazily: only tokens that long pieces actually produce are ever looked up.
        decoder = getattr(self, "_decoder", None)
        if decoder is None:
            decoder = self._decoder = {r: b for b, r in self._ranks.items()}
        return decoder[rank]

    def _rank(self, pair: str) -> int | None:
        """The rank of the token the two parts of ``pair`` would merge into, if any."""
        try:
            return self._pair_rank[pair]
        except KeyError:
            rank = self._ranks.get(self._part_bytes(pair[0]) + self._part_bytes(pair[1]))
            if len(self._pair_rank) >= _MAX_CACHED_PAIRS:
                self._pair_rank.clear()  # a memo, not state: bounded for long fuzz campaigns
            self._pair_rank[pair] = rank
            return rank

    def _present_pairs(self, parts: str) -> list[str] | None:
        chars = _few_distinct(parts, _DISTINCT_SEARCH)
        if chars is not None:
            return [a + b for a, b in product(chars, repeat=2) if self._rank(a + b) is not None and a + b in parts]
        pairs = set(map(str.__add__, parts, parts[1:]))
        if len(pairs) > _MAX_PAIR_KINDS:
            return None
        return [p for p in pairs if self._rank(p) is not None]

    def count(self, piece: bytes) -> int | None:
        """How many tokens tiktoken's BPE makes of ``piece``, or ``None``."""
        parts = self._merge(piece)
        return None if parts is None else len(parts)

    def encode(self, piece: bytes) -> list[int] | None:
        """The token ranks of ``piece`` exactly as tiktoken's BPE gives them, or ``None``."""
        parts = self._merge(piece)
        if parts is None:
            return None
        return [ord(ch) - _OFFSET if ord(ch) >= _OFFSET else self._ranks[self._bytes[ch]] for ch in parts]

    def _merge(self, piece: bytes) -> str | None:
        """The final parts, one character each (see the module docstring), or ``None``."""
        parts = piece.decode("latin-1")
        previous = -1
        while len(parts) >= 2:
            present = self._present_pairs(parts)
            if present is None:
                return None
            ranked = [(self._rank(p), p) for p in present]
            if not ranked:
                break
            r = min(rank for rank, _ in ranked if rank is not None)
            if r <= previous:
                return None  # a merge of the last round created a pair of lower rank
            kinds = [p for rank, p in ranked if rank == r]
            merged = chr(_OFFSET + r)
            for other in kinds:
                follow = self._rank(merged + other[0])
                if follow is not None and follow < r and any(kind + other in parts for kind in kinds):
                    return None  # tiktoken would merge that before the rest of the round
            if len(kinds) == 1:
                parts = parts.replace(kinds[0], merged)
            else:
                parts = re.sub("|".join(map(re.escape, kinds)), merged, parts)
            previous = r
        return parts


def _few_distinct(parts: str, limit: int) -> list[str] | None:
    """The distinct characters of ``parts`` if there are at most ``limit`` (else ``None``).

    One C-speed ``replace`` per distinct character: cheap exactly when the piece is a run.
    """
    found: list[str] = []
    rest = parts
    while rest:
        if len(found) == limit:
            return None
        found.append(rest[0])
        rest = rest.replace(rest[0], "")
    return found
