"""Text that stresses tokenizers and recovery (contract §4, §5; domain §4.6, D6, D10).

Every text is built as "a short unit, cycled to a drawn length": one length draw and a few unit
draws, whatever the size, so a 60,000-character tool result costs as little to generate as a word
and shrinks by shrinking one integer. Text never holds a lone surrogate (targets in other languages
reject them) and is always UTF-8 encodable.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import cache, wraps
from typing import Any, ParamSpec, TypeVar

from hypothesis import strategies as st

__all__ = [
    "EMOJI",
    "SPECIAL_TOKENS",
    "TEXT_KINDS",
    "WORDS",
    "chance",
    "cheap_tail_texts",
    "dense_texts",
    "filler",
    "giant_texts",
    "memo",
    "padded_tail_texts",
    "padding_runs",
    "pick",
    "sizes",
    "texts",
]

#: Kinds of text, in shrink order (prose first: a shrunk example reads as words).
TEXT_KINDS: tuple[str, ...] = ("prose", "code", "unicode", "emoji", "special", "nospace", "onechar")

WORDS: tuple[str, ...] = (
    "hello", "file", "the", "read", "test", "error", "function", "return", "value", "config", "update",
    "build", "fix", "import", "class", "data", "result", "path", "line", "token", "context", "summary",
    "and", "of", "to", "in", "is", "with", "for", "on", "Please", "check", "why", "it", "fails",
)
_CODE_LINES: tuple[str, ...] = (
    "def f(x):", "    return x + 1", "const a = require('fs');", "if (err) { throw err; }",
    "for i in range(10):", "import json", "}", "{\"key\": [1, 2.5, null]}", "SELECT * FROM t WHERE id = 1;",
    "#include <stdio.h>", "\tprintf(\"%d\\n\", n);", "export default function App() {", "    pass",
    "x = [i**2 for i in xs if i % 2]", "<div class=\"a\">&nbsp;</div>", "// TODO: fix",
)
#: Tokenizer special-token strings: counted as text (contract §5, D6), never an exception.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
    "<|endofprompt|>", "<|im_sep|>",
)
EMOJI: tuple[str, ...] = (
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🧑‍💻", "🏳️‍🌈", "\U0001d518\U0001d52b\U0001d526", "🤖", "🔥",
)
_ONE_CHARS = "a =-\n.0_#é中"
#: Padding and separator characters: a run of one of them costs about one token per 20 to 40
#: characters in the o200k and cl100k encodings (a run of ``a``, ``0`` or ``中`` costs far more).
_PADDING = " -=_.#*/"
_NOSPACE_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-.:;,"


P = ParamSpec("P")
S = TypeVar("S")


def memo(factory: Callable[P, S]) -> Callable[P, S]:
    """Build each strategy once per distinct arguments.

    Hypothesis validates a strategy object the first time it is drawn; a composite that builds
    fresh sub-strategies on every draw pays that again and again (it was most of the generation
    time). Strategies are immutable, so one object per argument tuple is safe; unhashable
    arguments simply bypass the cache.
    """
    built: dict[Any, S] = {}

    @wraps(factory)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> S:
        key = (args, tuple(sorted(kwargs.items())))
        try:
            hit = built.get(key)
        except TypeError:
            return factory(*args, **kwargs)
        if hit is None:
            hit = built[key] = factory(*args, **kwargs)
        return hit

    return wrapper


T = TypeVar("T")


@memo
def pick(options: Sequence[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from(options)``, one strategy object per tuple of options (see ``memo``): Hypothesis
    does not cache ``sampled_from``, and a new one costs a validation and a label on its first draw.
    The draws are the same: one index per pick."""
    return st.sampled_from(options)


@memo
def chance(percent: int) -> st.SearchStrategy[bool]:
    """True about ``percent``% of the time; shrinks to False (so shrinking switches perturbations off)."""
    return st.integers(0, 99).map(lambda n: n >= 100 - percent)


def _cycle(unit: str, length: int, sep: str = "") -> str:
    if length <= 0:
        return ""
    if not unit:
        unit = "a"
    piece = unit + sep
    reps = length // len(piece) + 1
    return (piece * reps)[:length]


_unicode_chars = st.characters(codec="utf-8")  # every code point but the surrogates


#: Seeds for corpus slices: one draw per text instead of one per word (generation speed).
_SEEDS = st.integers(0, 2**16 - 1)


@memo
@st.composite
def _unit(draw: st.DrawFn, kind: str) -> tuple[str, str]:
    """A short unit of ``kind`` and the separator used when cycling it (kinds not sliced from a corpus)."""
    if kind == "unicode":
        return draw(st.text(_unicode_chars, min_size=1, max_size=8)), ""
    if kind == "emoji":
        parts = draw(st.lists(pick(EMOJI), min_size=1, max_size=4))
        return "".join(parts), draw(pick(("", " ")))
    if kind == "nospace":
        return draw(st.text(_NOSPACE_ALPHABET, min_size=1, max_size=8)), ""
    return draw(pick(_ONE_CHARS)), ""


def texts(
    *,
    min_size: int = 0,
    max_size: int = 40,
    kinds: Sequence[str] = TEXT_KINDS,
    nonblank: bool = False,
) -> st.SearchStrategy[str]:
    """Text of ``min_size``..``max_size`` characters (code points) of one drawn kind.

    ``nonblank`` guarantees a non-empty text with a non-whitespace character, which the API
    requires of a text block (domain §5.1): a whitespace result gets its first character replaced
    by ``x`` -- by construction, so no example is ever rejected.
    """
    unknown = set(kinds) - set(TEXT_KINDS)
    if unknown or not kinds:
        raise ValueError(f"texts: kinds must be a non-empty subset of {TEXT_KINDS}, got {list(kinds)}")
    if nonblank:
        min_size = max(1, min_size)
    return _texts(min_size, max(min_size, max_size), tuple(kinds), nonblank)


@memo
@st.composite
def _texts(draw: st.DrawFn, min_size: int, max_size: int, kinds: tuple[str, ...], nonblank: bool) -> str:
    kind = draw(pick(kinds))
    length = draw(st.integers(min_size, max_size))
    if kind in ("prose", "code"):
        out = filler(draw(_SEEDS), length, kind)
    elif kind == "special":
        # A special-token string inside prose, at a drawn place (contract §5: counted as text).
        token = draw(pick(SPECIAL_TOKENS))
        out = _cycle(token + " " + filler(draw(_SEEDS), 24), length)
    else:
        unit, sep = draw(_unit(kind))
        out = _cycle(unit, length, sep)
    if nonblank and not out.strip():
        out = "x" + out[1:]
    return out


@memo
def sizes(*, small: int = 40, big: int = 20_000, big_percent: int = 5) -> st.SearchStrategy[tuple[int, int]]:
    """A (min, max) size range: mostly small, sometimes oversized (recovery needs results far over budget)."""
    return chance(big_percent).map(lambda b: (big // 10, big) if b else (0, small))


@cache
def _corpus(kind: str) -> str:
    rng = random.Random(f"ctxmodel-corpus-{kind}")
    if kind == "code":
        lines = [rng.choice(_CODE_LINES) for _ in range(6000)]
        return "\n".join(lines)
    if kind == "env":
        files = [f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.{rng.choice(('ts', 'py', 'json', 'md'))}"
                 for _ in range(3000)]
        return "\n".join(files)
    words = [rng.choice(WORDS) for _ in range(20000)]
    out = []
    for chunk in _batched(words, 12):
        out.append(" ".join(chunk) + rng.choice((".", ".", ",", "?", ".\n")))
    return "hello world. " + " ".join(out)  # a shrunk text reads "h", "hello"...


def _batched(items: Sequence[str], n: int) -> list[Sequence[str]]:
    return [items[i : i + n] for i in range(0, len(items), n)]


def filler(seed: int, length: int, kind: str = "prose") -> str:
    """``length`` characters of realistic-looking text, a pure function of ``seed`` (cheap at any size).

    Realistic histories need megabytes of text per example; drawing it character by character would
    overrun Hypothesis's choice budget, so they draw a seed and a length and slice a fixed corpus.
    """
    corpus = _corpus(kind)
    if length <= 0:
        return ""
    start = seed % len(corpus)
    out = (corpus[start:] + " " + corpus) * (length // len(corpus) + 1)
    return out[:length]


#: Common CJK characters (one o200k token or more each, against about four characters of prose).
_CJK = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后"
        "小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民"
        "样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什")


@memo
@st.composite
def dense_texts(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    """Dense text, mostly beyond ASCII: CJK slices, or emoji (``texts``' unicode kind leans to ASCII)."""
    length = draw(st.integers(min_size, max_size))
    if draw(st.booleans()):
        return draw(texts(min_size=length, max_size=length, kinds=("emoji",)))
    start = draw(st.integers(0, len(_CJK) - 1))
    return ((_CJK[start:] + _CJK) * (length // len(_CJK) + 2))[:length]


@memo
@st.composite
def cheap_tail_texts(draw: st.DrawFn) -> str:
    """A prefix of the floor's length or a little more, then a run of padding long enough to leave
    room for the notice.

    Everything a cut to the floor removes (at most 15 characters of prose or code, then 300 to 400
    of padding) costs fewer tokens than the notice that replaces it (24 in o200k and cl100k), so
    the block grows in tokens unless the notice is weighed (contract §4.5: shrinks, notice included).
    """
    head = draw(texts(min_size=200, max_size=215, kinds=("prose", "code")))
    return head + draw(padding_runs(300, 400))


@memo
@st.composite
def padded_tail_texts(draw: st.DrawFn) -> str:
    """A prefix about the floor's length, then up to 1,500 characters of padding: a cut must go deep
    into the padding before it frees as many tokens as its notice costs (contract §4.5)."""
    head = draw(texts(min_size=200, max_size=260, kinds=("prose", "code")))
    return head + draw(padding_runs(300, 1500))


@memo
@st.composite
def padding_runs(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    """A run of one padding or separator character (a padded table, a ``----`` line): text whose
    characters cost a few tokens per hundred, where a cut measured in characters frees almost no
    tokens (contract §4.5 weighs the notice against what a cut removes)."""
    length = draw(st.integers(min_size, max_size))
    return draw(pick(tuple(_PADDING))) * length


@memo
@st.composite
def giant_texts(draw: st.DrawFn) -> str:
    """A few thousand characters, plain, or prose with dense text (emoji, arbitrary code points) or
    with a run of one character, or a floor-sized prefix and a run of one character.

    Prose then dense text is what lets a cut that does not reserve its notice still fit: the prefix
    costs fewer tokens than the whole's characters per token predict. Dense then prose is the reverse,
    where the first estimate frees too little and must be re-measured (contract §5 costs differ).
    """
    order = draw(st.integers(0, 99))
    if 88 <= order < 94:
        return draw(texts(min_size=1500, max_size=6000, kinds=("prose", "code", "nospace")))
    if 72 <= order < 78:
        return draw(padded_tail_texts())
    prose = draw(texts(min_size=800, max_size=3000, kinds=("prose", "code")))
    if 78 <= order < 88:
        # The other extreme of density: a tail one token covers many characters of (padding, a
        # separator line), where a cut measured in characters frees almost no tokens.
        return prose + draw(padding_runs(300, 2500))
    dense = draw(dense_texts(400, 2500))
    return prose + dense if order < 88 else dense + prose
