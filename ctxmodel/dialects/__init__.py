"""Dialects: the message formats a history file can be in, each one module behind one record.

The history commands (``validate``, ``show``, ``repair``, ``normalize``, ``count``) read a file in
whichever format its agent stores, so each format is a :class:`Dialect`: how to recognise its
messages array, a lossless codec (``dump(load(x)) == x`` for every array ``load`` accepts: unknown
keys, their order and their values kept), the acceptance oracle of its provider (violations with
the provider's own texts and paths, as :class:`ctxmodel.oracle.Violation`), a repair that makes the
request acceptable changing as little as it can, a one-line-per-message view and a token count.

``anthropic`` wraps the reference modules the contract is written on (codec, oracle, render,
repair, tokens); ``openai_chat`` is OpenAI Chat Completions. Another dialect is one more module
holding the same record and one more line in :data:`MODULES`. Repair, rendering and tokenizer code
is imported by the function that needs it, so ``validate`` pays for none of them.

``openai_responses`` is OpenAI Responses ``input`` items, detected by their item and part types
rather than by roles. ``gemini`` is Gemini ``contents`` (``user``/``model`` roles, ``functionCall`` and
``functionResponse`` parts paired by count and order, ``thoughtSignature`` on the calls);
``bedrock_converse`` is Amazon Bedrock Converse ``messages`` (blocks without ``type``: ``toolUse``,
``toolResult``). One more dialect is one module with a ``DIALECT`` record.

Core layer: nothing here imports Hypothesis, the properties or the engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from ctxmodel.codec import copy_json
from ctxmodel.errors import HistoryError, UsageError

if TYPE_CHECKING:
    from ctxmodel.json_types import JsonMessage, JsonMessageView
    from ctxmodel.oracle import Rule, Violation
    from ctxmodel.repair import RepairReport
    from ctxmodel.tokens import Counter

__all__ = ["AUTO", "MODULES", "NAMES", "Counted", "Dialect", "choose", "detect", "get", "json_objects"]

#: Each dialect's name and the module holding its record (``DIALECT``), in detection-tie order:
#: the first one wins a tie, so a file both read alike (plain string turns) stays Anthropic.
MODULES: Mapping[str, str] = {
    "anthropic": "ctxmodel.dialects.anthropic",
    "openai-chat": "ctxmodel.dialects.openai_chat",
    "openai-responses": "ctxmodel.dialects.openai_responses",
    "gemini": "ctxmodel.dialects.gemini",
    "bedrock-converse": "ctxmodel.dialects.bedrock_converse",
}
NAMES = tuple(MODULES)
#: ``--dialect auto``: detect from the messages.
AUTO = "auto"

H = TypeVar("H")


@attrs.frozen
class Counted:
    """Raw tokens (before the fudge) of one countable piece, named by its path in the file."""

    path: str
    type: str
    tokens: int


class Dialect(Protocol[H]):
    """One message format. ``H`` is its loaded history (a tuple of its message values)."""

    #: The ``--dialect`` name (``anthropic``, ``openai-chat``).
    name: str
    #: What a person calls it, in the line a command prints about the file.
    title: str
    #: Its oracle's rules by id (summary and the domain section that sources it).
    rules: Mapping[str, Rule]
    #: Whether it has hidden messages (contract §2): the request is then not the file.
    has_visibility: bool
    #: Whether the contract's normalize (contract §3) has a meaning on it.
    normalizes: bool

    def detect(self, value: Any) -> int:
        """How strongly a messages array reads as this dialect (0: not at all)."""
        ...

    def load(self, value: Any) -> H:
        """The history of a JSON messages array (a ``HistoryError`` naming the place if it cannot)."""
        ...

    def dump(self, history: H) -> list[JsonMessage]:
        """The JSON messages array again; ``dump(load(x)) == x``."""
        ...

    def json_of(self, message: Any) -> JsonMessageView:
        """One loaded message as its JSON object (read only)."""
        ...

    def validate(self, history: H) -> list[Violation]:
        """Every violation of the request ``history``, with the provider's texts and paths."""
        ...

    def render(self, history: H, *, highlight: Collection[str] = ()) -> str:
        """One line per message, ``>>`` where ``highlight`` points."""
        ...

    def repair(self, history: H, *, orphans: str = "to_text") -> tuple[H, RepairReport]:
        """A history whose request passes :meth:`validate`, and each change it took."""
        ...

    def count(self, history: H, counter: Counter) -> list[Counted]:
        """Raw tokens of every countable piece of the messages."""
        ...


def json_objects(value: Any, root: str, many: str, one: str) -> list[dict[str, Any]]:
    """Copies of the objects of a JSON array, for a dialect that keeps views over them: the only
    refusal such a codec makes (not an array, an entry not an object), named by its path
    (``expected an array of {many}``, ``{root}.N: expected {one}``)."""
    if not isinstance(value, list):
        raise HistoryError(root, f"expected an array of {many}, got {type(value).__name__}")
    for n, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise HistoryError(f"{root}.{n}", f"expected {one}")
    return [copy_json(entry) for entry in value]


def get(name: str) -> Dialect[Any]:
    """The dialect called ``name``; a usage error naming the choices otherwise."""
    module = MODULES.get(name)
    if module is None:
        raise UsageError(f"--dialect {name}: expected one of {', '.join((AUTO, *NAMES))}")
    dialect: Dialect[Any] = importlib.import_module(module).DIALECT
    return dialect


def detect(value: Any) -> Dialect[Any]:
    """The dialect a messages array reads as: the highest score, ties to the first of :data:`NAMES`."""
    scores = {name: get(name).detect(value) for name in NAMES}
    best = max(scores.values())
    return get(next(name for name in NAMES if scores[name] == best))


def choose(value: Any, name: str = AUTO) -> tuple[Dialect[Any], bool]:
    """The dialect to read ``value`` with, and whether it was detected (not forced by name)."""
    if name == AUTO:
        return detect(value), True
    return get(name), False
