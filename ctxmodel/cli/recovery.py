"""``ctxmodel recover``: run the context-recovery reference on one stored history (contract §4).

What a maintainer wants after "prompt is too long": would recovery fit this file into the budget,
what would it hide and cut, and by how much. The report goes to stdout (to stderr when the history
itself goes to stdout with ``-o -``). Exit codes (contract §9 spirit): 0 recovered or already
within budget, 1 the controlled error ("Context window recovery failed ..."), 2 usage or input
errors (printed as one line by ``ctxmodel.cli.main``). On the controlled error nothing is written:
the history would be the input unchanged (contract §4 rule 8).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import click

from ctxmodel import exitcodes
from ctxmodel.cli._files import Progress, announce_big, emit_history, open_input, write_history_atomically
from ctxmodel.cli._files import one_line as _one_line
from ctxmodel.cli._files import read_prompt as _read_prompt
from ctxmodel.contract_data import DEFAULT_RESERVE, reserve_for
from ctxmodel.errors import UsageError
from ctxmodel.model import Block, Message
from ctxmodel.recover import Recovery
from ctxmodel.recover import recover as run_recover
from ctxmodel.tokens import Counter, get_counter

__all__ = ["COMMANDS", "recover"]


class _CountingProgress:
    """The counter recovery is given, reporting each block it counts (the slow part of a big file).

    Delegates everything to the real counter (``CounterLike``, ``ctxmodel.recover``), so the counts
    and the per-block cache are the counter's own.
    """

    def __init__(self, counter: Counter, progress: Progress) -> None:
        self._counter = counter
        self._progress = progress

    @property
    def name(self) -> str:
        return self._counter.name

    @property
    def fudge(self) -> tuple[int, int]:
        return self._counter.fudge

    def raw_text(self, text: str) -> int:
        return self._counter.raw_text(text)

    def raw_block(self, block: Block) -> int:
        self._progress.advance()
        return self._counter.raw_block(block)

    def count_blocks(self, blocks: Iterable[Block]) -> int:
        return self._counter.count_blocks(blocks)

    def count_messages(self, messages: Iterable[Message]) -> int:
        return self._counter.count_messages(messages)

    def count_text(self, text: str) -> int:
        return self._counter.count_text(text)


def _report(result: Recovery, window: int, max_tokens: int, counter: str) -> list[str]:
    reserve = reserve_for(max_tokens)
    lines = [
        f"tokens: {result.prev_context_tokens} -> {result.new_context_tokens}"
        f" (allowed: {result.allowed} = floor(0.9 * {window}) - {reserve}; counter {counter})"
    ]
    if result.error is not None:
        return lines
    if result.prev_context_tokens <= result.allowed:
        lines.append("within budget: nothing to do")
        return lines
    hidden = f"hidden: {result.messages_removed} message{'' if result.messages_removed == 1 else 's'}"
    if result.truncation_id is not None:
        hidden += f" (truncationId {result.truncation_id})"
    lines.append(hidden)
    lines.append(f"degraded: {len(result.degraded)} tool result{'' if len(result.degraded) == 1 else 's'}")
    for d in result.degraded:
        lines.append(
            f"  {d.path}: {d.before_chars} -> {d.after_chars} chars, {d.before_tokens} -> {d.after_tokens} tokens"
        )
    return lines


@click.command("recover")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=str))
@click.option(
    "--context-window",
    "window",
    type=click.IntRange(min=1),
    required=True,
    help="The model's context window, in tokens (at least 1).",
)
@click.option(
    "--max-tokens",
    type=int,
    default=DEFAULT_RESERVE,
    show_default=True,
    help="The reserve for output; <= 0 means 8192 (the agents' ANTHROPIC_DEFAULT_MAX_TOKENS, their default too).",
)
@click.option(
    "--system-prompt",
    "prompt_file",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="A file holding the system prompt (counted, never changed).",
)
@click.option("--counter", default="zoo", show_default=True, help="Token counter: zoo, o200k, cl100k.")
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=str),
    default=None,
    help="Write the recovered history here (atomically), or to stdout with '-'.",
)
def recover(file: str, window: int, max_tokens: int, prompt_file: str | None, counter: str, out: str | None) -> None:
    """Fit FILE into floor(0.9 * WINDOW) - reserve tokens: truncate, then cut tool results (contract §4).

    Prints the token count before and after, the budget, the messages hidden and each tool result
    cut (path, characters and tokens before -> after), or the controlled error (exit 1).
    """
    if out is not None and out != "-" and file != "-" and os.path.exists(out) and os.path.samefile(file, out):
        raise UsageError(f"{out}: refusing to overwrite the input file; write elsewhere")
    big = announce_big(file)
    history = open_input(file).history
    prompt = _read_prompt(prompt_file)
    blocks = sum(len(m.blocks) for m in history)
    progress = Progress("recovering (tokens of the blocks counted)", blocks, big=big)
    counting = _CountingProgress(get_counter(counter), progress)
    result = run_recover(
        history, context_window=window, max_tokens=max_tokens, system_prompt=prompt, counter=counting
    )
    progress.close()
    to_stderr = out == "-"
    for line in _report(result, window, max_tokens, counter):
        click.echo(_one_line(line), err=to_stderr)
    if result.error is not None:
        click.echo(_one_line(f"ctxmodel: {file}: {result.error}"), err=True)
        sys.exit(exitcodes.FAILED)
    if out == "-":
        emit_history(result.messages, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    elif out is not None:
        write_history_atomically(out, result.messages)
        click.echo(_one_line(f"wrote: {out}"))


COMMANDS = [recover]
