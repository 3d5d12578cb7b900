"""Rendering a run's outcomes: the text a person reads, and JUnit for CI dashboards (contract §8, §9).

The engine (``ctxmodel.gate``) produces values; this module only reads them, so a new output format
touches no engine code.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

import attrs

from ctxmodel.errors import CtxmodelError
from ctxmodel.events import Event, Heartbeat, PropertyFinished
from ctxmodel.results import Kind, Outcome

if TYPE_CHECKING:
    from ctxmodel.baseline import Baseline, Verdict

__all__ = [
    "TextProgress",
    "format_baseline",
    "format_baseline_replay",
    "format_failure",
    "format_summary",
    "format_warnings",
    "junit_xml",
    "render_params",
    "reproduce_command",
    "status_word",
]

STATUSES = ("passed", "failed", "not-judged", "cut", "skipped", "error", "never-run")


def _compact(value: Any, limit: int = 600) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_messages(messages: Any, indent: str = "    ") -> str:
    """The compact one-line-per-message view (``ctxmodel.render``), or compact JSON if unreadable."""
    try:
        from ctxmodel.codec import load
        from ctxmodel.render import render

        text = render(load(messages))
    except (ImportError, CtxmodelError):
        text = _compact(messages, 2000)
    return "\n".join(indent + line for line in text.splitlines()) if text else indent + "(no messages)"


def render_params(params: Mapping[str, Any], indent: str = "    ") -> str:
    lines: list[str] = []
    others = {k: v for k, v in params.items() if k not in ("messages", "policies")}
    if others:
        lines.append(indent + "  ".join(f"{k}={_compact(v, 200)}" for k, v in others.items()))
    if "messages" in params:
        lines.append(render_messages(params["messages"], indent))
    return "\n".join(lines)


def render_reply(op: str, calls: Sequence[Any], indent: str = "    ") -> str:
    judged = [c for c in calls if c.op == op] or list(calls)
    if not judged:
        return indent + "(no call reached the target)"
    last = judged[0]
    if last.failure is not None:
        return f"{indent}{last.op} failed: {last.failure}"
    result = last.result or {}
    lines = [f"{indent}{last.op} returned:"]
    others = {k: v for k, v in result.items() if k != "messages"} if isinstance(result, dict) else {}
    if others:
        lines.append(indent + "  " + "  ".join(f"{k}={_compact(v, 200)}" for k, v in others.items()))
    if isinstance(result, dict) and "messages" in result:
        lines.append(render_messages(result["messages"], indent + "  "))
    return "\n".join(lines)


def reproduce_command(fixture: Path | str, target_spec: str) -> str:
    return f"ctxmodel replay {shlex.quote(str(fixture))} --target {shlex.quote(target_spec)}"


def format_kind(outcome: Outcome, kind: Kind, target_spec: str) -> str:
    prop = outcome.prop
    word = "WARNING" if kind.severity == "warn" else "FAILED"
    where = f"met by {prop.id}, contract §7" if kind.key.startswith("target-") else prop.clause
    head = f"{word} {kind.key} ({where}), first met at example {kind.first_example}"
    if outcome.flaky and kind.severity == "fail":
        head += " [flaky: the target answered differently when the input was replayed]"
    lines = [head, f"  {prop.summary}", f"  found:    {kind.finding.message}"]
    if kind.finding.expected:
        lines.append(f"  required: {kind.finding.expected}")
    lines.append("  minimal input:" if kind.severity == "fail" else "  input:")
    lines.append(render_params(kind.params))
    lines.append("  the target:")
    lines.append(render_reply(prop.op, kind.calls))
    if kind.fixture is not None:
        lines.append(f"  fixture: {kind.fixture}")
        lines.append(f"  Reproduce with: {reproduce_command(kind.fixture, target_spec)}")
    return "\n".join(lines)


def format_failure(outcome: Outcome, target_spec: str) -> str:
    """Every distinct failing kind of one property, each with its minimal input and fixture."""
    return "\n\n".join(format_kind(outcome, k, target_spec) for k in outcome.kinds)


def _known_word(outcome: Outcome) -> str:
    n = len(outcome.known)
    return f"{n} kind{'s' if n > 1 else ''} in the baseline"


def status_word(outcome: Outcome) -> str:
    if outcome.status == "passed" and outcome.known:
        return f"known failures only ({_known_word(outcome)})"
    if outcome.status == "passed":
        word = f"passed, {outcome.warnings_total} warning(s)" if outcome.warnings_total else "passed"
        return word + (f" (judged {outcome.judged}; {outcome.reason})" if outcome.rejected else "")
    if outcome.status == "not-judged":
        return f"NOT JUDGED: {outcome.reason}"
    if outcome.status == "cut":
        return f"CUT: {outcome.reason}"
    if outcome.status == "failed":
        n = len(outcome.kinds)
        known = f" + {_known_word(outcome)}" if outcome.known else ""
        cut = f"; {outcome.cut}" if outcome.cut else ""
        return "FAILED" + (f" ({n} kinds{known})" if n > 1 else f" ({n} kind{known})" if known else "") + cut
    if outcome.status == "error":
        return "ERROR"
    if outcome.status == "never-run":
        return "NEVER RUN" + (f": {outcome.reason}" if outcome.reason else "")
    return f"skipped: {outcome.reason}"


def format_warnings(outcomes: Iterable[Outcome], target_spec: str = "") -> str:
    lines: list[str] = []
    for outcome in outcomes:
        for kind in outcome.warned:
            where = f" (input: {kind.fixture})" if kind.fixture is not None else ""
            lines.append(f"  {kind.key}: {kind.finding.message}{where}")
        hidden = outcome.warnings_total - len(outcome.warned)
        if hidden > 0:
            lines.append(f"  {outcome.prop.id}: … and {hidden} more")
    return "Warnings (not failures; --strict makes them failures):\n" + "\n".join(lines) if lines else ""


def format_summary(outcomes: Sequence[Outcome], cells: Mapping[str, tuple[int, int]] | None = None) -> str:
    """One line per property. With ``cells`` (``Coverage.judged_cells``), a column of the input
    cells each property judged out of those it can judge: a pass that judged 2 of 22 cells is weaker
    than one that judged all 22, and a kind hidden in an unreached cell was not looked for."""
    width = max([len("property"), *(len(o.prop.id) for o in outcomes)])
    column = cells is not None
    head = f"{'cells':>7}  " if column else ""
    lines = [f"{'property':<{width}}  {'examples':>8}  {head}{'found at':>8}  {'shrinks':>7}  result"]
    for o in outcomes:
        found = str(min(k.first_example for k in o.kinds)) if o.kinds else "-"
        reached = ""
        if cells is not None:
            judged = cells.get(o.prop.id)
            reached = f"{f'{judged[0]}/{judged[1]}' if judged and o.examples else '-':>7}  "
        lines.append(
            f"{o.prop.id:<{width}}  {o.examples:>8}  {reached}{found:>8}  {o.shrink_steps:>7}  {status_word(o)}"
        )
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in STATUSES}
    line = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no properties selected"
    known_only = sum(o.status == "passed" and bool(o.known) for o in outcomes)
    if known_only:
        line += f"; {known_only} of the passed fail{'s' if known_only == 1 else ''} only on known kinds"
    missing = _ops_without_a_property(outcomes)
    if missing:
        line += f"; every property of {', '.join(missing)} skipped: the target has no such op"
    lines.append(line)
    return "\n".join(lines)


def _ops_without_a_property(outcomes: Sequence[Outcome]) -> list[str]:
    by_op: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_op.setdefault(o.prop.op, []).append(o)
    return sorted(
        op for op, group in by_op.items()
        if all(o.status == "skipped" and o.reason.startswith("target has no") for o in group)
    )


def format_baseline(directory: Path | str, verdicts: Sequence[Verdict]) -> str:
    """One line per kind, new ones first: what ``check --baseline`` decided and why."""
    order = {"new": 0, "known": 1, "fixed": 2, "passes": 3, "not-checked": 4}
    words = {"new": "NEW", "known": "known", "fixed": "fixed", "passes": "passes", "not-checked": "not checked"}
    n = sum(v.status != "new" for v in verdicts)
    lines = [f"Baseline {directory} ({n} known kind{'' if n == 1 else 's'}):"]
    for v in sorted(verdicts, key=lambda v: order[v.status]):
        lines.append(f"  {words[v.status]:<11}  {v.kind}: {v.detail}")
    counts = {s: sum(v.status == s for v in verdicts) for s in order}
    lines.append(
        f"{counts['new']} new, {counts['known']} still failing (known), {counts['fixed']} fixed"
        + (f", {counts['passes']} no longer reproducing (not confirmed)" if counts["passes"] else "")
        + (f", {counts['not-checked']} not checked" if counts["not-checked"] else "")
    )
    return "\n".join(lines)


def format_baseline_replay(baseline: Baseline) -> str:
    """The one line a run prints after replaying its baseline, before the search."""
    count = {r: sum(e.replayed == r for e in baseline.entries) for r in ("reproduces", "passes")}
    rest = len(baseline.entries) - count["reproduces"] - count["passes"]
    return (
        f"baseline {baseline.directory}: {len(baseline.entries)} fixture(s) of {len(baseline.kinds)} kind(s); "
        f"replayed first: {count['reproduces']} reproduce(s), {count['passes']} no longer reproduce(s)"
        + (f", {rest} not checked" if rest else "")
    )


#: The ``type`` of the ``skipped`` element of a property that fails only on known kinds, as pytest
#: marks an expected failure (``pytest.xfail``).
KNOWN_FAILURE = "ctxmodel.known-failure"


def junit_xml(outcomes: Sequence[Outcome], *, target_spec: str, suite: str = "ctxmodel") -> str:
    """One testcase per property, for CI dashboards (a suite-level failure would hide which rule broke).

    A property that fails only on kinds of the baseline is ``skipped`` with the kinds as its reason,
    as pytest writes an expected failure: dashboards count it apart and do not fail the job on it,
    and it stays visible, which a passed testcase with a property attached would not be on most."""
    root = ElementTree.Element(
        "testsuite",
        name=suite,
        tests=str(len(outcomes)),
        failures=str(sum(o.status in ("failed", "not-judged") for o in outcomes)),
        errors=str(sum(o.status == "error" for o in outcomes)),
        skipped=str(sum(o.status in ("skipped", "never-run", "cut") or (o.status == "passed" and bool(o.known))
                        for o in outcomes)),
        time=f"{sum(o.seconds for o in outcomes):.3f}",
    )
    props = ElementTree.SubElement(root, "properties")
    ElementTree.SubElement(props, "property", name="target", value=target_spec)
    for o in outcomes:
        case = ElementTree.SubElement(
            root, "testcase", classname=f"ctxmodel.{o.prop.op}", name=o.prop.id, time=f"{o.seconds:.3f}"
        )
        if o.status == "failed":
            node = ElementTree.SubElement(case, "failure", message=o.failures[0].message if o.failures else "failed")
            node.text = format_failure(o, target_spec)
        elif o.status == "not-judged":
            ElementTree.SubElement(case, "failure", message=f"not judged: {o.reason}")
        elif o.status == "error":
            ElementTree.SubElement(case, "error", message=o.reason)
        elif o.status == "passed" and o.known:
            ElementTree.SubElement(
                case, "skipped", type=KNOWN_FAILURE, message=f"known failure (baseline): {', '.join(o.known)}"
            )
        elif o.status == "skipped":
            ElementTree.SubElement(case, "skipped", message=o.reason)
        elif o.status == "cut":
            ElementTree.SubElement(case, "skipped", message=f"cut: {o.reason}")
        elif o.status == "never-run":
            ElementTree.SubElement(case, "skipped", message=f"never run: {o.reason or 'no example reached it'}")
        notes = [f"warning: {w.finding.message}" for w in o.warned]
        if o.status == "failed":
            notes += [f"known failure (baseline): {key}" for key in o.known]
        if notes:
            out = ElementTree.SubElement(case, "system-out")
            out.text = "\n".join(notes)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


@attrs.define
class TextProgress:
    """The text report as a run goes: a line per property that held, the failure text of one that
    failed (to ``out``), the heartbeat of one still at work (to ``err``). ``mark`` rewrites an outcome
    before it is shown (a baseline moving its known kinds out of the failures)."""

    target_spec: str
    out: Callable[[str], None]
    err: Callable[[str], None]
    mark: Callable[[Outcome], Outcome] | None = None
    handles: frozenset[type[Event]] = frozenset({PropertyFinished, Heartbeat})

    def handle(self, event: Event) -> None:
        if isinstance(event, Heartbeat):
            self.err(event.text)
            return
        assert isinstance(event, PropertyFinished)
        outcome = self.mark(event.outcome) if self.mark is not None else event.outcome
        if outcome.status == "failed":
            self.out("")
            self.out(format_failure(outcome, self.target_spec))
            self.out("")
        elif outcome.status == "error":
            self.out(f"ERROR {outcome.prop.id}: {outcome.reason}")
        else:
            seconds = f"{outcome.seconds:.1f} s"
            self.out(f"  {outcome.prop.id}: {status_word(outcome)} ({outcome.examples} examples, {seconds})")


def junit_error(message: str, *, target_spec: str, suite: str = "ctxmodel") -> str:
    """The JUnit file of a run that could not start its target (exit 3): one errored testcase, so a
    CI dashboard shows why rather than a missing report."""
    root = ElementTree.Element("testsuite", name=suite, tests="1", failures="0", errors="1", skipped="0", time="0")
    props = ElementTree.SubElement(root, "properties")
    ElementTree.SubElement(props, "property", name="target", value=target_spec)
    case = ElementTree.SubElement(root, "testcase", classname="ctxmodel.target", name="start", time="0")
    ElementTree.SubElement(case, "error", message=message)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
