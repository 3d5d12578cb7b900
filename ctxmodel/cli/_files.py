"""What the history commands share: opening a history file (and saying what it turned out to be),
reading a system prompt, writing without ever leaving half a file behind, keeping a line a line.

Files are written with the permissions a plain ``open()`` would give (the user's umask), not the
0600 of a temporary file: a history or report is shared, copied into bug reports, read by CI.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import click

from ctxmodel.codec import write
from ctxmodel.document import Document, open_document
from ctxmodel.errors import UsageError
from ctxmodel.model import History

__all__ = [
    "BIG_FILE_BYTES",
    "Progress",
    "announce_big",
    "default_mode",
    "dialect_option",
    "emit_history",
    "one_line",
    "open_input",
    "read_as",
    "read_prompt",
    "write_bytes_atomically",
    "write_history_atomically",
]


#: A file this big gets progress lines on stderr even when stderr is not a terminal.
BIG_FILE_BYTES = 16 << 20
#: Seconds between progress updates: on a terminal (one line rewritten), in a log (one line each).
TTY_EVERY = 0.25
LOG_EVERY = 5.0


def file_size(path: str) -> int | None:
    try:
        return None if path == "-" else os.stat(path).st_size
    except OSError:
        return None


class Progress:
    """Progress of a long step on stderr: a line rewritten in place on a terminal, else (for a big
    file, where a CI log would otherwise show nothing for a minute) a line every few seconds.
    Silent when neither, and silent for steps that finish within the first interval."""

    def __init__(self, label: str, total: int, *, big: bool) -> None:
        self.label, self.total, self.done = label, max(total, 1), 0
        self.tty = sys.stderr.isatty()
        self.enabled = self.tty or big
        self.interval = TTY_EVERY if self.tty else LOG_EVERY
        self.start = self.last = time.monotonic()
        self.shown = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        done = min(self.done, self.total)  # recovery counts some blocks twice (cached): never past 100%
        self._show(f"{self.label}: {100 * done // self.total}% ({done}/{self.total})")

    def _show(self, text: str) -> None:
        self.shown = True
        if self.tty:
            sys.stderr.write("\r" + text + "\x1b[K")
            sys.stderr.flush()
        else:
            click.echo(text, err=True)

    def close(self) -> None:
        if self.shown:
            self._show(f"{self.label}: done ({self.total}) in {time.monotonic() - self.start:.1f} s")
            if self.tty:
                sys.stderr.write("\n")


def announce_big(path: str) -> bool:
    """For a big file, say that reading it takes a while (a 200 MB history takes seconds); is it big?"""
    size = file_size(path)
    big = size is not None and size >= BIG_FILE_BYTES
    if big and size is not None:
        click.echo(one_line(f"{path}: reading {size / (1 << 20):.1f} MB ..."), err=True)
    return big


def open_input(path: str, keep: bool = False, dialect: str = "auto") -> Document:
    """The file as a document, each thing recognised about it said in one line on stderr.

    ``dialect``: a name of ``ctxmodel.dialects`` (``--dialect``), or ``auto`` to detect it.
    """
    document = open_document(path, keep=keep, dialect=dialect)
    for note in document.notes:
        click.echo(one_line(note), err=True)
    return document


def read_as(document: Document) -> str:
    """What a command says it took the messages to be: ``Anthropic Messages, detected``."""
    from ctxmodel.dialects import get

    how = "detected" if document.detected else "as --dialect says"
    return f"{get(document.dialect).title}, {how}"


def dialect_option() -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``--dialect``: the message format, detected from the file unless given."""
    from ctxmodel.dialects import AUTO, NAMES

    return click.option(
        "--dialect", type=click.Choice([AUTO, *NAMES]), default=AUTO, show_default=True,
        help="The message format: detected from the messages, or forced.",
    )


def default_mode() -> int:
    """What ``open(path, "w")`` would create: 0666 less the umask (read without changing it for long)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def read_prompt(path: str | None) -> str:
    """The system prompt file's text ("" without one); a one-line usage error when unreadable."""
    if path is None:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"{path}: cannot read the system prompt: {reason}") from None


def one_line(text: str) -> str:
    """Paths and errors may carry newlines or lone surrogates from the file: keep each line one line."""
    escaped = "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)
    return escaped.encode("utf-8", "backslashreplace").decode("utf-8")


def emit_history(history: History, stream: BinaryIO, indent: int | None = None) -> None:
    """UTF-8 JSON, streamed message by message (a 50 MB history never becomes one string)."""
    write(history, stream, indent=indent)
    stream.write(b"\n")


def _atomically(target: str, fill: Callable[[BinaryIO], None], mode: int | None = None) -> None:
    """Write through a temporary file and a rename, so a failed run never leaves half a file.

    ``mode``: the permissions of the result (default: what a plain ``open()`` gives).
    """
    import tempfile  # only a command that writes pays for it (random, shutil): validate and show never do

    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ctxmodel-", suffix=".json", dir=directory)
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        os.chmod(tmp, default_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None


def write_history_atomically(target: str, history: History, indent: int | None = None) -> None:
    """A history as JSON, atomically (see ``_atomically``)."""
    _atomically(target, lambda handle: emit_history(history, handle, indent))


def write_bytes_atomically(target: str, data: bytes, mode: int | None = None) -> None:
    """Bytes, atomically (see ``_atomically``)."""

    def fill(handle: BinaryIO) -> None:
        handle.write(data)

    _atomically(target, fill, mode)
