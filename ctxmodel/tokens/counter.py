"""The token counter the agents in the field use, exactly, with a per-block cache (contract §5).

Counts mirror Roo-Code's ``countTokens`` (domain §4.6): ``o200k_base`` with special-token text
counted as text, one serialization per block kind, and the 1.5 fudge applied once per call and
rounded up. Budget decisions in recovery (contract §4) are only as good as this agreement.

Speed, without giving up exactness:

- **Per-block cache.** Blocks are immutable values (``ctxmodel.model``: nested JSON is never
  mutated), so a block object's count never changes: recounting a history where one block
  changed finds every other block by identity and encodes only that one. Behind it, a cache keyed
  by the exact string that gets encoded (a text block's own string, whose hash Python keeps)
  catches equal content in different objects. Both are bounded by total characters.
- **Long text** is cut where the pre-tokenizer regex provably splits anyway (see
  :func:`_safe_cuts`), so tiktoken never sees more than a chunk; a chunk that has no such point
  and is long is pre-tokenized here and its long pieces go to :class:`LongPieceBPE`, whose
  rounds are exact (see its module) and linear on runs, where tiktoken's BPE is super-linear
  and its regex overflows its stack (4 MB of spaces panics tiktoken 0.14).
"""

from __future__ import annotations

import decimal
import difflib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs
import regex  # type: ignore[import-untyped]

from ctxmodel.errors import UsageError
from ctxmodel.model import Block, Image, Message, Text, ToolResult, ToolUse
from ctxmodel.tokens.bpe import LongPieceBPE
from ctxmodel.tokens.encodings import ENCODING_NAMES, get_encoding
from ctxmodel.tokens.jsjson import js_stringify

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ACCEPTED_TOKENIZERS",
    "COUNTERS",
    "FIELD_FUDGE",
    "IMAGE_OTHER_TOKENS",
    "Counter",
    "CounterSpec",
    "block_text",
    "counter_spec",
    "get_counter",
    "image_tokens",
    "tokenizer_name",
]

#: Raw tokens of an image without inline data (domain §4.6).
IMAGE_OTHER_TOKENS = 300

#: Text up to this many characters goes to tiktoken in one call.
_CHUNK_MAX = 1 << 16
#: Long text is cut at the first safe point after this many characters.
_CHUNK_TARGET = 1 << 15
#: Pieces at least this long (UTF-8 bytes) go to the round-based BPE.
_LONG_PIECE = 1 << 12
#: Cache bounds: total characters of cached strings / of blocks cached by identity.
_TEXT_CACHE_CHARS = 64 << 20
_BLOCK_CACHE_CHARS = 64 << 20
_CACHE_ENTRIES = 1 << 18

# A cut before a space or newline that follows an ASCII letter or digit: every match of the
# o200k_base and cl100k_base patterns that holds that letter or digit ends right there (letter,
# number and contraction alternatives cannot take a space or newline; the others cannot hold a
# letter or digit), and the matches before it never look past it except to see "not a letter",
# which end of input also is. So the scan of the text is the scans of the two sides, joined.
_SAFE_CUT = re.compile(r"(?<=[A-Za-z0-9])[ \n]")


@attrs.frozen
class CounterSpec:
    name: str
    encoding: str
    #: The fudge factor as a fraction (numerator, denominator), applied once per call.
    fudge: tuple[int, int]


#: The fudge the agents in the field apply (Roo-Code, Zoo-Code: 1.5 once per counter call, rounded up).
FIELD_FUDGE: tuple[int, int] = (3, 2)

#: The short aliases (contract §5, §7 "short aliases may exist"): the agents' counter (``zoo``) and
#: two raw ones. The encoding names themselves (``o200k_base``, ``cl100k_base``) mean the encoding
#: with the field's fudge, and ``ENCODING*FUDGE`` (``o200k_base*1``) states the fudge: see
#: :func:`counter_spec`.
COUNTERS: dict[str, CounterSpec] = {
    "zoo": CounterSpec("zoo", "o200k_base", FIELD_FUDGE),
    "o200k": CounterSpec("o200k", "o200k_base", (1, 1)),
    "cl100k": CounterSpec("cl100k", "cl100k_base", (1, 1)),
}

#: What an unknown tokenizer's message lists as accepted.
ACCEPTED_TOKENIZERS = (
    f"{' or '.join(ENCODING_NAMES)} (fudge 1.5), "
    f'{{"encoding": "{ENCODING_NAMES[0]}", "fudge": NUMBER}}, '
    f"or an alias: {', '.join(COUNTERS)}"
)


def _fudge_text(fudge: tuple[int, int]) -> str:
    """``1``, ``1.5``, ``1.25``: the exact decimal when there is one, else ``num/den``."""
    num, den = fudge
    rest = den
    for p in (2, 5):
        while rest % p == 0:
            rest //= p
    if rest != 1:
        return f"{num}/{den}"
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        text = format(decimal.Decimal(num) / decimal.Decimal(den), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _parse_fudge(value: object, what: str) -> tuple[int, int]:
    """A positive number (JSON's, read as the decimal it was written as) or ``num/den``."""
    if isinstance(value, bool):
        raise UsageError(f"{what}: fudge: expected a positive number, got {value!r}")
    try:
        if isinstance(value, int):
            frac = Fraction(value)
        elif isinstance(value, float):
            frac = Fraction(repr(value))
        elif isinstance(value, str):
            frac = Fraction(value.strip())
        else:
            raise ValueError
    except (ValueError, ZeroDivisionError, OverflowError):
        raise UsageError(f"{what}: fudge: expected a positive number, got {value!r}") from None
    if frac <= 0:
        raise UsageError(f"{what}: fudge: expected a positive number, got {value!r}")
    return frac.numerator, frac.denominator


def _did_you_mean(text: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(text, list(names), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown(text: str, what: str) -> UsageError:
    hint = _did_you_mean(text, [*ENCODING_NAMES, *COUNTERS])
    return UsageError(f"{what} {text!r}: unknown tokenizer{hint}; expected {ACCEPTED_TOKENIZERS}")


def counter_spec(tokenizer: str | Mapping[str, Any], what: str = "tokenizer") -> CounterSpec:
    """The counter a tokenizer declaration means (contract §7 ``tokenizer``), or a one-line
    ``UsageError`` naming the accepted ones.

    - an encoding name, ``o200k_base`` or ``cl100k_base``: that encoding with the field's fudge 1.5,
      applied once per counter call (what Roo-Code and Zoo-Code count);
    - ``{"encoding": NAME, "fudge": NUMBER}``: the fudge stated (``1`` counts raw);
    - ``NAME*FUDGE`` (``o200k_base*1``): the same object written as one string, which is how a
      fixture or a header names it;
    - the short aliases ``zoo`` (``o200k_base``, 1.5), ``o200k`` and ``cl100k`` (raw).

    The spec's ``name`` is the canonical string: the alias or encoding name as written, else
    ``NAME*FUDGE`` (the encoding name alone when the fudge is the field's).
    """
    if isinstance(tokenizer, Mapping):
        unknown_keys = sorted(set(tokenizer) - {"encoding", "fudge"})
        if unknown_keys:
            hint = _did_you_mean(unknown_keys[0], ["encoding", "fudge"])
            shape = '{"encoding": NAME, "fudge": NUMBER}'
            raise UsageError(f"{what}: unknown key {unknown_keys[0]!r}{hint}; expected {shape}")
        encoding = tokenizer.get("encoding")
        if not isinstance(encoding, str):
            raise UsageError(f"{what}: encoding: expected one of {', '.join(ENCODING_NAMES)}, got {encoding!r}")
        if encoding not in ENCODING_NAMES:
            hint = _did_you_mean(encoding, ENCODING_NAMES)
            known = ", ".join(ENCODING_NAMES)
            raise UsageError(f"{what}: encoding {encoding!r}: unknown encoding{hint}; expected one of {known}")
        fudge = _parse_fudge(tokenizer["fudge"], what) if "fudge" in tokenizer else FIELD_FUDGE
        name = encoding if fudge == FIELD_FUDGE else f"{encoding}*{_fudge_text(fudge)}"
        return CounterSpec(name, encoding, fudge)
    if not isinstance(tokenizer, str):
        raise UsageError(f"{what}: expected a tokenizer name or an object, got {type(tokenizer).__name__}")
    text = tokenizer.strip()
    alias = COUNTERS.get(text)
    if alias is not None:
        return alias
    if text in ENCODING_NAMES:
        return CounterSpec(text, text, FIELD_FUDGE)
    encoding, star, fudge_text = text.partition("*")
    if star and encoding.strip() in ENCODING_NAMES:
        return counter_spec({"encoding": encoding.strip(), "fudge": fudge_text.strip()}, what)
    raise _unknown(text, what)


def tokenizer_name(tokenizer: str | Mapping[str, Any], what: str = "tokenizer") -> str:
    """The canonical name of a tokenizer declaration (checked): what headers and fixtures show."""
    return counter_spec(tokenizer, what).name


K = TypeVar("K")
V = TypeVar("V")


class _BoundedCache(Generic[K, V]):
    """An LRU bounded by total weight (characters) and entries, so fuzz campaigns stay flat."""

    def __init__(self, max_weight: int, max_entries: int) -> None:
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._max_weight = max_weight
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            self._data.move_to_end(key)
            return entry[0]

    def put(self, key: K, value: V, weight: int) -> None:
        if weight > self._max_weight:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._data[key] = (value, weight)
            self._weight += weight
            while self._weight > self._max_weight or len(self._data) > self._max_entries:
                _, (_, w) = self._data.popitem(last=False)
                self._weight -= w

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def weight(self) -> int:
        return self._weight


def _utf16_length(text: str) -> int:
    """``string.length`` in JavaScript: UTF-16 code units (astral characters count two)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def image_tokens(block: Image) -> int:
    """``ceil(sqrt(data.length))`` for an image with string ``source.data``, else 300 (domain §4.6, D3)."""
    data = block.data
    if data is None:
        return IMAGE_OTHER_TOKENS
    n = _utf16_length(data)
    return 0 if n == 0 else math.isqrt(n - 1) + 1


def block_text(block: ToolUse | ToolResult) -> str:
    """The text the agents encode for a tool block (domain §4.6, D4).

    ``tool_use``: ``Tool: NAME`` and ``Arguments: JSON`` on two lines, the input as JavaScript's
    ``JSON.stringify`` prints it. ``tool_result``: ``Tool Result (ID)``, ``[Error]`` when flagged,
    then the string content, or one line per list item (its text, ``[Image content]``, or
    ``[Unsupported content block: TYPE]``). A result without a ``content`` key adds no line (the
    agents' ``typeof content === "string"`` / ``Array.isArray`` tests both fail on ``undefined``);
    an empty text item still adds its (empty) line, as ``join("\\n")`` does.
    """
    if isinstance(block, ToolUse):
        try:
            arguments = js_stringify(block.input)
        except (TypeError, ValueError, RecursionError):
            return "[serialization error]"
        return f"Tool: {block.name}\nArguments: {arguments}"
    lines = [f"Tool Result ({block.tool_use_id})"]
    if block.is_error:
        lines.append("[Error]")
    content = block.content
    if isinstance(content, str):
        lines.append(content)
    elif content is not None:
        for item in content:
            if isinstance(item, Text):
                lines.append(item.text)
            elif isinstance(item, Image):
                lines.append("[Image content]")
            else:
                lines.append(f"[Unsupported content block: {item.type}]")
    return "\n".join(lines)


def _safe_cuts(text: str) -> Iterator[str]:
    """``text`` in chunks of about ``_CHUNK_TARGET`` characters, cut only where the regex splits."""
    pos = 0
    end = len(text)
    while end - pos > _CHUNK_MAX:
        start = pos + _CHUNK_TARGET
        if text.find(" ", start) < 0 and text.find("\n", start) < 0:
            break  # memchr speed: a run without spaces or newlines has no cut
        match = _SAFE_CUT.search(text, start)
        if match is None:
            break
        cut = match.start()
        yield text[pos:cut]
        pos = cut
    yield text[pos:] if pos else text


class Counter:
    """One named counter: ``raw_*`` are per-block raw tokens, ``count_*`` apply the fudge once."""

    def __init__(self, spec: CounterSpec, *, share_caches_with: Counter | None = None) -> None:
        self.name = spec.name
        self.encoding = spec.encoding
        #: ``(numerator, denominator)``: a count is ``ceil(raw * numerator / denominator)``, once per call.
        self.fudge = spec.fudge
        other = share_caches_with
        if other is not None and other.encoding == spec.encoding:
            # Raw counts depend on the encoding only: counters differing by their fudge share them.
            self._encoding: tiktoken.Encoding = other._encoding
            self._pattern: regex.Pattern = other._pattern
            self._long: LongPieceBPE = other._long
            self._texts: _BoundedCache[str, int] = other._texts
            self._blocks: _BoundedCache[int, tuple[Block, int]] = other._blocks
            self._pieces: _BoundedCache[str, int] = other._pieces
            return
        self._encoding = get_encoding(spec.encoding)
        self._pattern = regex.compile(self._encoding._pat_str)
        self._long = LongPieceBPE(self._encoding._mergeable_ranks)
        self._texts = _BoundedCache(_TEXT_CACHE_CHARS, _CACHE_ENTRIES)
        self._blocks = _BoundedCache(_BLOCK_CACHE_CHARS, _CACHE_ENTRIES)
        self._pieces = _BoundedCache(1 << 20, 1 << 16)

    @property
    def fudge_factor(self) -> Fraction:
        """The fudge as an exact fraction (1 for a raw counter)."""
        return Fraction(*self.fudge)

    def __repr__(self) -> str:
        return f"Counter({self.name!r}, encoding={self.encoding!r}, fudge={_fudge_text(self.fudge)})"

    # -- raw counts -------------------------------------------------------------------------

    def raw_text(self, text: str) -> int:
        """Tokens of ``text`` with special-token text as plain text (domain §4.6, D6); cached."""
        if not text:
            return 0
        cached = self._texts.get(text)
        if cached is not None:
            return cached
        n = self._tokenize(text)
        self._texts.put(text, n, len(text))
        return n

    def raw_block(self, block: Block) -> int:
        """Raw tokens of one block by the rules of domain §4.6; unknown block kinds count 0 (D5)."""
        if isinstance(block, Text):
            return self.raw_text(block.text)
        if isinstance(block, ToolUse | ToolResult):
            key = id(block)
            hit = self._blocks.get(key)
            if hit is not None and hit[0] is block:
                return hit[1]
            text = block_text(block)
            n = self.raw_text(text)
            # Keyed by identity, holding the block so the id cannot be reused while cached.
            self._blocks.put(key, (block, n), len(text))
            return n
        if isinstance(block, Image):
            return image_tokens(block)
        return 0

    # -- counts with the fudge ----------------------------------------------------------------

    def fudged(self, raw: int) -> int:
        """``ceil(raw * fudge)`` in integers (no float rounding at any size; contract §5, D2)."""
        num, den = self.fudge
        return -(-raw * num // den)

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        return self.fudged(sum(self.raw_block(b) for b in blocks))

    def count_messages(self, messages: Iterable[Message]) -> int:
        """All blocks of all messages in one call, so the fudge rounds once (domain §4.6, D2, D7)."""
        return self.fudged(sum(self.raw_block(b) for m in messages for b in m.blocks))

    def count_text(self, text: str) -> int:
        """A system prompt: one text block; ``""`` counts 0."""
        return self.fudged(self.raw_text(text))

    def clear_cache(self) -> None:
        self._texts.clear()
        self._blocks.clear()
        self._pieces.clear()

    # -- tokenization ---------------------------------------------------------------------------

    def _tokenize(self, text: str) -> int:
        """Exact token count of ``text`` (equal to ``len(encoding.encode_ordinary(text))``)."""
        if len(text) <= _CHUNK_MAX:
            return len(self._encoding.encode_ordinary(text))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # What tiktoken does with lone surrogates, done once for the whole text.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        total = 0
        for chunk in _safe_cuts(text):
            if len(chunk) <= _CHUNK_MAX:
                total += len(self._encoding.encode_ordinary(chunk))
            else:
                total += self._count_pieces(chunk)
        return total

    def _count_pieces(self, chunk: str) -> int:
        """A long chunk with no safe cut: pre-tokenize here, long pieces to the round-based BPE."""
        total = 0
        ranks = self._encoding._mergeable_ranks
        for match in self._pattern.finditer(chunk):
            piece: str = match.group()
            if len(piece) * 4 < _LONG_PIECE:
                cached = self._pieces.get(piece)
                if cached is None:
                    cached = len(self._encoding._encode_single_piece(piece))
                    self._pieces.put(piece, cached, len(piece))
                total += cached
                continue
            data = piece.encode("utf-8")
            if len(data) < _LONG_PIECE or data in ranks:
                total += len(self._encoding._encode_single_piece(data))
                continue
            fast = self._long.count(data)
            total += fast if fast is not None else len(self._encoding._encode_single_piece(data))
        return total


_LOCK = threading.Lock()
_INSTANCES: dict[str, Counter] = {}


def get_counter(name: str = "zoo") -> Counter:
    """The process-wide counter a tokenizer name means (see :func:`counter_spec`).

    One instance per name, and counters of the same encoding share their raw-count caches (a raw
    count does not depend on the fudge), so ``zoo`` and ``o200k_base`` never tokenize twice.
    """
    counter = _INSTANCES.get(name)
    if counter is not None:
        return counter
    spec = counter_spec(name, "counter")
    with _LOCK:
        counter = _INSTANCES.get(name)
        if counter is None:
            same = next((c for c in _INSTANCES.values() if c.name == spec.name), None)
            if same is None:
                sibling = next((c for c in _INSTANCES.values() if c.encoding == spec.encoding), None)
                same = Counter(spec, share_caches_with=sibling)
            counter = _INSTANCES[name] = same
    return counter
