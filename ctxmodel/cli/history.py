"""``ctxmodel validate | normalize | repair | show``: the reference model on one stored history file.

These are the commands a maintainer runs on a real ``api_conversation_history.json`` after a 400:
is the request this file produces acceptable (contract §6), what would the pairing normalizer make
of it (contract §3), and what does it look like. By default they work on the request a
stored file produces, its effective history (contract §2, §6); ``--raw`` takes the file as given.

Input errors propagate as ``HistoryError`` and are printed by ``ctxmodel.cli.main`` as one line
(``ctxmodel: FILE: messages.3.content.1.tool_use_id: expected a string, got null``), exit 2.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO

import click

if TYPE_CHECKING:
    from ctxmodel.repair import RepairReport

from ctxmodel import exitcodes
from ctxmodel.cli._files import dialect_option as _dialect_option
from ctxmodel.cli._files import emit_history as _emit
from ctxmodel.cli._files import one_line as _one_line
from ctxmodel.cli._files import open_input as _open
from ctxmodel.cli._files import read_as as _read_as
from ctxmodel.cli._files import write_bytes_atomically as _write_bytes
from ctxmodel.cli._files import write_history_atomically as _write_atomically
from ctxmodel.document import Document
from ctxmodel.errors import UsageError
from ctxmodel.model import History, Message
from ctxmodel.oracle import RULES, Rule, Violation, validate
from ctxmodel.visibility import visible_mask

#: ``ctxmodel.repair.ORPHANS``, spelled here so that ``validate`` and ``show`` do not import the
#: repair module to build this one option (``tests/integration/test_cli_lazy.py`` keeps the two equal).
REPAIR_ORPHANS = ("to_text", "drop")


__all__ = ["COMMANDS", "normalize_command", "repair_command", "show_command", "validate_command"]

#: How many violations ``validate`` lists by default (the per-rule count above them covers the rest).
DEFAULT_MAX = 50

_FILE = click.argument("file", type=click.Path(allow_dash=True, path_type=str))
_RAW = click.option("--raw", is_flag=True, help="Judge the file as given, not the request it produces.")
_DIALECT = _dialect_option()


def _request(history: History, raw: bool) -> tuple[History, list[int]]:
    """The messages judged and, for each, its index in the file (contract §2, §6)."""
    if raw:
        return history, list(range(len(history)))
    positions = [i for i, keep in enumerate(visible_mask(history)) if keep]
    return tuple(history[i] for i in positions), positions


def _body_violations(document: Document, judged: History) -> list[Violation]:
    """Lone surrogates (domain §5.6) in the other fields of a request body file (``system``,
    ``tools``...): sent with the messages, they break the same body. Placed in the body as the file
    has it, its messages replaced by those judged."""
    if document.kind != "request" or document.where != ("messages",) or document.text is None:
        return []
    from ctxmodel.codec import dump_message
    from ctxmodel.oracle import lone_surrogates, surrogate_violation

    try:
        body = json.loads(document.text.decode("utf-8", "surrogatepass"))
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    body["messages"] = [dump_message(m, copy=False) for m in judged]
    return [surrogate_violation(found) for found in lone_surrogates(body)
            if found.path != "messages" and not found.path.startswith("messages.")]


def _stored_path(path: str, positions: Sequence[int]) -> str:
    """``messages.K...`` of the request as the same place in the stored file."""
    parts = path.split(".")
    if len(parts) >= 2 and parts[0] == "messages" and parts[1].isdigit() and int(parts[1]) < len(positions):
        parts[1] = str(positions[int(parts[1])])
    return ".".join(parts)


def _violation_line(v: Violation, positions: Sequence[int], raw: bool) -> str:
    message = v.message if v.message.startswith(v.path + ":") or v.message.startswith(v.path + ".") else None
    line = message if message is not None else f"{v.path}: {v.message}"
    where = [v.rule]
    stored = _stored_path(v.path, positions)
    if not raw and stored != v.path:
        where.append(f"stored {stored}")
    return _one_line(f"{line}  [{'; '.join(where)}]")


def _scope(file: str, history: History, judged: Sequence[Message], raw: bool, document: Document) -> str:
    file = "<stdin>" if file == "-" else file
    if raw:
        return f"{file}: {len(history)} messages, judged as given ({_read_as(document)})"
    return (f"{file}: request of {len(judged)} messages (the effective history of {len(history)} stored; "
            f"{_read_as(document)})")


def _native_scope(file: str, document: Document) -> str:
    """The scope line for a dialect without hidden messages: the file's messages are the request."""
    file = "<stdin>" if file == "-" else file
    return f"{file}: request of {len(document.native)} messages ({_read_as(document)})"


def _counts(violations: Sequence[Violation], rules: Mapping[str, Rule] = RULES) -> list[tuple[str, int]]:
    """Rules by how often they are broken, most first (ties in ``rules`` order)."""
    order = {rule: n for n, rule in enumerate(rules)}
    counted = Counter(v.rule for v in violations)
    return sorted(counted.items(), key=lambda item: (-item[1], order.get(item[0], len(order))))


def _count_lines(violations: Sequence[Violation], rules: Mapping[str, Rule] = RULES) -> list[str]:
    counts = _counts(violations, rules)
    width = max(len(rule) for rule, _ in counts)
    digits = len(str(max(n for _, n in counts)))
    noun = "violation" if len(violations) == 1 else "violations"
    lines = [f"{len(violations)} {noun}, by rule:"]
    for rule, n in counts:
        summary = rules[rule].summary if rule in rules else ""
        lines.append(f"  {n:>{digits}}  {rule:<{width}}  {summary}")
    return lines


@click.command("validate")
@_FILE
@_RAW
@click.option(
    "--thinking/--no-thinking",
    default=None,
    help="Whether the request enables extended thinking (default: enabled iff it carries thinking blocks).",
)
@click.option("--show", is_flag=True, help="Also print the judged messages, violations marked >>.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: one object on stdout (counts, every violation, the file's scope) for machines.")
@click.option("--max", "limit", type=click.IntRange(min=0), default=None,
              help="List at most N violations (0: all). Text default: 50; json default: all.")
@_DIALECT
def validate_command(
    file: str, raw: bool, thinking: bool | None, show: bool, fmt: str, limit: int | None, dialect: str
) -> None:
    """Would the Anthropic API accept the request FILE produces? Exit 0 clean, 1 with violations.

    First the count of violations per rule, then each violation on one line: its path in the
    request, the API's own error text, the rule id and, when it differs, the same place in the
    stored file. --format json prints the same as one JSON object. An OpenAI Chat Completions file
    is judged by OpenAI's rules (detected; --dialect to force), its messages as the request.
    """
    document = _open(file, keep=True, dialect=dialect)  # a request body's other fields are judged too
    if document.dialect != "anthropic":
        _validate_native(file, document, thinking, show, fmt, limit)
        return
    history = document.history
    judged, positions = _request(history, raw)
    violations = _body_violations(document, judged) + validate(judged, thinking=thinking)
    scope = _scope(file, history, judged, raw, document)
    if limit is None:
        limit = 0 if fmt == "json" else DEFAULT_MAX
    listed = violations if limit == 0 else violations[:limit]
    if fmt == "json":
        report = {
            "file": "<stdin>" if file == "-" else file,
            "kind": document.kind,
            "dialect": document.dialect,
            "notes": list(document.notes),
            "judged": "raw" if raw else "request",
            "stored_messages": len(history),
            "judged_messages": len(judged),
            "accepted": not violations,
            "counts": dict(_counts(violations)),
            "violations": [
                {"rule": v.rule, "path": v.path, "stored_path": _stored_path(v.path, positions), "ids": list(v.ids),
                 "message": v.message}
                for v in listed
            ],
            "more": len(violations) - len(listed),
        }
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        if violations:
            for line in _count_lines(violations):
                click.echo(_one_line(line))
        for v in listed:
            click.echo(_violation_line(v, positions, raw))
        if len(listed) < len(violations):
            click.echo(f"... and {len(violations) - len(listed)} more (--max 0 lists them all, --format json too)")
        if show:
            from ctxmodel.render import render

            click.echo(render(judged, highlight=[v.path for v in violations]))
    if violations:
        noun = "violation" if len(violations) == 1 else "violations"
        click.echo(_one_line(f"{scope}: {len(violations)} {noun}"), err=True)
        sys.exit(exitcodes.FAILED)
    click.echo(_one_line(f"{scope}: the API would accept its structure"), err=True)


def _anthropic_only(document: Document, option: str) -> None:
    raise UsageError(f"{option} applies to Anthropic Messages; {document.source} was read as {_read_as(document)}")


def _validate_native(
    file: str, document: Document, thinking: bool | None, show: bool, fmt: str, limit: int | None
) -> None:
    """``validate`` on a dialect without hidden messages: its oracle on the file's messages."""
    from ctxmodel.dialects import get

    if thinking is not None:
        _anthropic_only(document, "--thinking/--no-thinking")
    dialect = get(document.dialect)
    history = document.native
    violations = dialect.validate(history)
    positions = list(range(len(history)))
    scope = _native_scope(file, document)
    if limit is None:
        limit = 0 if fmt == "json" else DEFAULT_MAX
    listed = violations if limit == 0 else violations[:limit]
    if fmt == "json":
        report = {
            "file": "<stdin>" if file == "-" else file,
            "kind": document.kind,
            "dialect": document.dialect,
            "notes": list(document.notes),
            "judged": "request",
            "stored_messages": len(history),
            "judged_messages": len(history),
            "accepted": not violations,
            "counts": dict(_counts(violations, dialect.rules)),
            "violations": [
                {"rule": v.rule, "path": v.path, "stored_path": v.path, "ids": list(v.ids), "message": v.message}
                for v in listed
            ],
            "more": len(violations) - len(listed),
        }
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        if violations:
            for line in _count_lines(violations, dialect.rules):
                click.echo(_one_line(line))
        for v in listed:
            click.echo(_violation_line(v, positions, True))
        if len(listed) < len(violations):
            click.echo(f"... and {len(violations) - len(listed)} more (--max 0 lists them all, --format json too)")
        if show:
            click.echo(dialect.render(history, highlight=[v.path for v in violations]))
    if violations:
        noun = "violation" if len(violations) == 1 else "violations"
        click.echo(_one_line(f"{scope}: {len(violations)} {noun}"), err=True)
        sys.exit(exitcodes.FAILED)
    click.echo(_one_line(f"{scope}: the API would accept its structure"), err=True)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


@click.command("normalize")
@_FILE
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=str), help="Write here, not stdout.")
@click.option("--orphans", type=click.Choice(["drop", "to_text"]), default="drop", show_default=True)
@click.option("--trailing", type=click.Choice(["leave", "close"]), default="leave", show_default=True)
@_RAW
@click.option("--indent", type=click.IntRange(0, 8), default=None, help="Pretty-print with this indent.")
@_DIALECT
def normalize_command(
    file: str, out: str | None, orphans: str, trailing: str, raw: bool, indent: int | None, dialect: str
) -> None:
    """Write the request-ready history: normalize(effective(FILE)), or normalize(FILE) with --raw.

    The JSON goes to OUT (written atomically) or stdout; what changed goes to stderr. FILE itself
    is never written.
    """
    if out is not None and out != "-" and file != "-" and _same_file(file, out):
        raise UsageError(f"{out}: refusing to overwrite the input file; write elsewhere")
    document = _open(file, dialect=dialect)
    if document.dialect != "anthropic":
        raise UsageError(
            f"normalize: {document.source} was read as {_read_as(document)}: the contract's normalize (§3) is "
            "defined on Anthropic Messages only; `ctxmodel repair FILE -o OUT` makes a request this format accepts"
        )
    history = document.history
    judged, positions = _request(history, raw)
    from ctxmodel.normalize import normalize_report

    result, report = normalize_report(judged, orphans=orphans, trailing=trailing)
    scope = _scope(file, history, judged, raw, document)
    stored, sent = len(history), len(positions)
    del history, judged, document  # only the result is needed from here on: a 50 MB file should not be held twice
    if out is None or out == "-":
        stream: BinaryIO = sys.stdout.buffer
        _emit(result, stream, indent)
        stream.flush()
    else:
        _write_atomically(out, result, indent)
    click.echo(_one_line(scope), err=True)
    lines = report.lines()
    if not lines:
        click.echo("no pairing changes", err=True)
    for line in lines:
        click.echo(_one_line(line), err=True)
    if not raw and sent != stored:
        click.echo("(message numbers above are positions in the request, not in the file)", err=True)


@click.command("show")
@_FILE
@click.option("--check", is_flag=True, help="Mark (>>) the places the request built from FILE breaks an API rule.")
@_DIALECT
def show_command(file: str, check: bool, dialect: str) -> None:
    """One line per stored message; • visible in the request, · hidden (contract §2)."""
    document = _open(file, dialect=dialect)
    if document.dialect != "anthropic":
        _show_native(file, document, check)
        return
    history = document.history
    mask = visible_mask(history)
    highlight: list[str] = []
    if check:
        judged, positions = _request(history, raw=False)
        highlight = [_stored_path(v.path, positions) for v in validate(judged)]
    if history:
        from ctxmodel.render import render

        click.echo(render(history, visible=mask, highlight=highlight))
    shown = sum(mask)
    name = "<stdin>" if file == "-" else file
    summary = (f"{name}: {len(history)} messages ({_read_as(document)}), {shown} visible (•), "
               f"{len(history) - shown} hidden (·)")
    if check:
        noun = "violation" if len(highlight) == 1 else "violations"
        summary += f", {len(highlight)} {noun} in the request (>>)"
    click.echo(_one_line(summary), err=True)


def _show_native(file: str, document: Document, check: bool) -> None:
    """``show`` for a dialect without hidden messages: every message is sent, so no •/· marks."""
    from ctxmodel.dialects import get

    dialect = get(document.dialect)
    history = document.native
    highlight = [v.path for v in dialect.validate(history)] if check else []
    if history:
        click.echo(dialect.render(history, highlight=highlight))
    name = "<stdin>" if file == "-" else file
    summary = f"{name}: {len(history)} messages ({_read_as(document)}), all sent (this format hides none)"
    if check:
        noun = "violation" if len(highlight) == 1 else "violations"
        summary += f", {len(highlight)} {noun} in the request (>>)"
    click.echo(_one_line(summary), err=True)


def _backup_path(path: str) -> str:
    """``FILE.bak``, or ``FILE.bak.2``, ``.3``... : an earlier backup is never overwritten."""
    candidate, n = f"{path}.bak", 1
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{path}.bak.{n}"
    return candidate


@click.command("repair")
@_FILE
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, allow_dash=True, path_type=str),
              help="Write the repaired file here ('-': stdout).")
@click.option("--in-place", is_flag=True, help="Rewrite FILE, keeping the original as FILE.bak.")
@click.option("--orphans", type=click.Choice(REPAIR_ORPHANS), default="to_text", show_default=True,
              help="What to do with a result whose tool_use is not right before it.")
@click.option(
    "--thinking/--no-thinking",
    default=None,
    help="Whether the request is sent with extended thinking (default: enabled iff it carries thinking blocks).",
)
@_DIALECT
def repair_command(
    file: str, out: str | None, in_place: bool, orphans: str, thinking: bool | None, dialect: str
) -> None:
    """Make the stored history FILE one whose request the API accepts, changing as little as it can.

    Unlike normalize, the result is still a stored history the agent can load: hidden (condensed,
    truncated) messages, their tags and all metadata are kept, and only the messages the API
    rejects change. Each change is printed (message index in FILE, rule, tool id). A file that
    needs nothing is left alone (with -o, copied byte for byte); a changed one keeps its own
    formatting. Exit 0 when the request passes, 1 when something could not be repaired.
    """
    if in_place and out is not None:
        raise UsageError("repair: give -o OUT or --in-place, not both")
    if in_place and file == "-":
        raise UsageError("repair: --in-place needs a file, not stdin")
    if out is not None and out != "-" and file != "-" and os.path.exists(out) and _same_file(file, out):
        raise UsageError(f"{out}: that is the input file: use --in-place (it keeps a backup)")
    document = _open(file, keep=True, dialect=dialect)
    if document.dialect != "anthropic":
        if thinking is not None:
            _anthropic_only(document, "--thinking/--no-thinking")
        _repair_native(file, document, out, in_place, orphans)
        return
    history = document.history
    from ctxmodel.repair import repair

    result, report = repair(history, orphans=orphans, thinking=thinking)
    judged = len([1 for keep in visible_mask(result) if keep])
    data = document.raw if not report.changed else document.dump(result, report.origins)
    _repair_outcome(file, document, data, len(history), len(result), judged, report, out, in_place)


def _repair_native(file: str, document: Document, out: str | None, in_place: bool, orphans: str) -> None:
    """``repair`` for a dialect without hidden messages: its repair, written in the file's style."""
    from ctxmodel.dialects import get

    dialect = get(document.dialect)
    history = document.native
    result, report = dialect.repair(history, orphans=orphans)
    stored = [dialect.json_of(m) for m in history]
    data = document.raw if not report.changed else document.dump_json(
        [dialect.json_of(m) for m in result], report.origins, stored)
    _repair_outcome(file, document, data, len(history), len(result), len(result), report, out, in_place)


def _repair_outcome(
    file: str, document: Document, data: bytes | None, before: int, after: int, judged: int, report: RepairReport,
    out: str | None, in_place: bool,
) -> None:
    """Print each change, write the result where asked, and say what the request still breaks."""
    name = "<stdin>" if file == "-" else file
    for line in report.lines():
        click.echo(_one_line(line), err=True)
    summary = f"{name}: {before} stored messages -> {after} ({_read_as(document)}); "
    if not report.changed:
        summary += "nothing it can repair" if report.unresolved else "nothing to repair: the request already passes"
    else:
        noun = "change" if len(report.changes) == 1 else "changes"
        summary += f"{len(report.changes)} {noun}"
    assert document.raw is not None and data is not None
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    elif out is not None:
        _write_bytes(out, data)
        summary += f"; wrote {out}"
    elif in_place and report.changed:
        backup = _backup_path(file)
        mode = os.stat(file).st_mode & 0o7777
        _write_bytes(backup, document.raw, mode)
        _write_bytes(file, data, mode)
        summary += f"; rewrote {file} (the original is {backup})"
    elif report.changed:
        summary += "; nothing written (use -o OUT or --in-place)"
    click.echo(_one_line(summary), err=True)
    if report.unresolved:
        for v in report.unresolved:
            text = v.message if v.message.startswith(v.path) else f"{v.path}: {v.message}"
            click.echo(_one_line(f"still rejected: {text}  [{v.rule}]"), err=True)
        if any(v.rule == "lone-surrogate" for v in report.unresolved):
            click.echo("(repair cannot invent text: a lone surrogate inside a string is half of a character whose "
                       "other half is gone; fix that string where the agent wrote it)", err=True)
        if any(v.rule == "empty-messages" for v in report.unresolved):
            click.echo("(repair cannot invent a message: the request has none to send)", err=True)
        if any(v.rule == "request-too-large" for v in report.unresolved):
            click.echo("(a request that big is over any context window: `ctxmodel recover FILE --context-window N` "
                       "hides and cuts what the agent would)", err=True)
        noun = "violation" if len(report.unresolved) == 1 else "violations"
        click.echo(_one_line(f"{name}: the request of {judged} messages keeps {len(report.unresolved)} {noun}"),
                   err=True)
        sys.exit(exitcodes.FAILED)
    if report.changed:
        click.echo(_one_line(f"the request ({judged} messages) now passes the oracle"), err=True)


COMMANDS = [validate_command, normalize_command, repair_command, show_command]
