"""What the history commands share: opening a history file (and saying what it turned out to be),
reading a system prompt, writing without ever leaving half a file behind, keeping a line a line.

Files are written with the permissions a plain ``open()`` would give (the user's umask), not the
0600 of a temporary file: a history or report is shared, copied into bug reports, read by CI.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import click

from ctxmodel.codec import write
from ctxmodel.document import Document, open_document
from ctxmodel.errors import UsageError
from ctxmodel.model import History

__all__ = [
    "default_mode",
    "emit_history",
    "one_line",
    "open_input",
    "read_prompt",
    "write_bytes_atomically",
    "write_history_atomically",
]


def open_input(path: str, keep: bool = False) -> Document:
    """The file as a document, each thing recognised about it said in one line on stderr."""
    document = open_document(path, keep=keep)
    for note in document.notes:
        click.echo(one_line(note), err=True)
    return document


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
