"""What the history commands share: reading a system prompt, writing a history without ever
leaving half of one behind, and keeping a line a line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from ctxmodel.codec import write
from ctxmodel.errors import UsageError
from ctxmodel.model import History

__all__ = ["emit_history", "one_line", "read_prompt", "write_history_atomically"]


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


def write_history_atomically(target: str, history: History, indent: int | None = None) -> None:
    """Write through a temporary file and a rename, so a failed run never leaves half a history."""
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ctxmodel-", suffix=".json", dir=directory)
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            emit_history(history, handle, indent)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None
