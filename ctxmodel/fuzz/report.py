"""The campaign report: ``report.json`` plus one self-contained HTML page.

The page is for the person who has to act on a failure, so each failure is drawn as the
conversation it is — messages as rows, tool pairs linked and coloured alike, the block the
finding names highlighted — next to what the target returned. No network and no CDN: styles,
the SVG chart and the few lines of script are inline, so the file works from an artifact store or
an air-gapped machine. Every figure on the page carries ``data-figure`` so a test can read the
rendered page back and compare it with ``report.json``.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ctxmodel.events import Event
from ctxmodel.fixtures import write_text_atomic
from ctxmodel.fuzz.events import CampaignFinished, KindKept
from ctxmodel.fuzz.results import CampaignResult

__all__ = ["CELL_EVENT", "ReportWriter", "conversation_html", "render_html", "shown_events", "write_report"]

#: Characters of a text shown before it is cut (the fixture holds the full value).
PREVIEW_CHARS = 400


class ReportWriter:
    """A handler of the campaign's events: the report rewritten at every kind kept and at the end,
    so a campaign stopped at any moment leaves a valid report of everything it found."""

    def __init__(self, directory: str | os.PathLike[str], result_now: Callable[[float], CampaignResult]) -> None:
        self.directory = directory
        self.result_now = result_now
        self.handles = frozenset({KindKept, CampaignFinished})

    def handle(self, event: Event) -> None:
        if isinstance(event, KindKept):
            write_report(self.result_now(time.time()), self.directory)
        elif isinstance(event, CampaignFinished):
            write_report(event.result, self.directory)


def write_report(result: CampaignResult, directory: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.html`` atomically, so a stop at any moment (Ctrl-C, time
    limit) leaves either the previous complete report or the new one, never half a file."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    data = result.to_json()
    json_path = out / "report.json"
    html_path = out / "report.html"
    write_text_atomic(json_path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    write_text_atomic(html_path, render_html(data))
    return json_path, html_path


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    if len(text) <= limit:
        return _e(text)
    return f'{_e(text[:limit])}<span class="more">… ({len(text) - limit} more characters)</span>'


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _hue(tool_id: str) -> int:
    """A stable colour per tool id, so a ``tool_use`` and its results read as one pair."""
    return int(hashlib.sha1(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:6], 16) % 360


def _tool_tag(tool_id: Any, anchor: str, *, link: bool, known: bool) -> str:
    if not isinstance(tool_id, str):
        return f'<span class="tid bad">{_e(_compact(tool_id))}</span>'
    style = f' style="--hue:{_hue(tool_id)}"'
    data = f' data-tool-id="{_e(tool_id)}"'
    if link and known:
        return f'<a class="tid" href="#{_e(anchor)}"{style}{data}>{_e(tool_id)}</a>'
    if link:
        return f'<span class="tid orphan" title="no tool_use with this id"{style}{data}>{_e(tool_id)}</span>'
    return f'<span class="tid" id="{_e(anchor)}"{style}{data}>{_e(tool_id)}</span>'


def _result_content(content: Any) -> str:
    if isinstance(content, str):
        return f'<div class="txt">{_preview(content)}</div>'
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(f'<div class="txt">{_preview(item["text"])}</div>')
            elif isinstance(item, dict) and item.get("type") == "image":
                parts.append(_image_badge(item))
            else:
                parts.append(f'<div class="raw">{_preview(_compact(item), 160)}</div>')
        return "".join(parts)
    if content is None:
        return '<div class="raw">(no content)</div>'
    return f'<div class="raw">{_preview(_compact(content), 160)}</div>'


def _image_badge(block: Mapping[str, Any]) -> str:
    source = block.get("source")
    if isinstance(source, dict):
        kind = source.get("media_type") or source.get("type") or "?"
        data = source.get("data")
        size = f", {len(data)} base64 chars" if isinstance(data, str) else ""
        return f'<span class="img">image {_e(kind)}{_e(size)}</span>'
    return '<span class="img">image</span>'


def _block_html(block: Any, path: str, anchor_prefix: str, uses: Collection[str], highlight: Collection[str]) -> str:
    cls = "blk"
    if path in highlight:
        cls += " offending"
    if not isinstance(block, dict):
        return f'<div class="{cls}" data-path="{path}"><div class="raw">{_preview(_compact(block), 160)}</div></div>'
    kind = block.get("type")
    kind_s = kind if isinstance(kind, str) else _compact(kind)
    body: str
    if kind == "text":
        text = block.get("text")
        body = f'<div class="txt">{_preview(text)}</div>' if isinstance(text, str) else _e(_compact(text))
    elif kind == "image":
        body = _image_badge(block)
    elif kind == "tool_use":
        tid = block.get("id")
        anchor = f"{anchor_prefix}-tu-{tid}"
        tag = _tool_tag(tid, anchor, link=False, known=True)
        body = (
            f'{tag} <span class="name">{_e(block.get("name"))}</span>'
            f'<div class="raw">{_preview(_compact(block.get("input")), 200)}</div>'
        )
    elif kind == "tool_result":
        tid = block.get("tool_use_id")
        anchor = f"{anchor_prefix}-tu-{tid}"
        tag = _tool_tag(tid, anchor, link=True, known=isinstance(tid, str) and tid in uses)
        err = ' <span class="badge err">is_error</span>' if block.get("is_error") is True else ""
        body = f"→ {tag}{err}{_result_content(block.get('content'))}"
    elif kind in ("thinking", "redacted_thinking"):
        text = block.get("thinking", block.get("data", ""))
        body = f'<div class="txt dim">{_preview(str(text), 160)}</div>'
    else:
        fields = {k: v for k, v in block.items() if k != "type"}
        body = f'<div class="raw">{_preview(_compact(fields), 160)}</div>'
    return f'<div class="{cls} k-{_e(kind_s)}" data-path="{path}"><span class="kind">{_e(kind_s)}</span>{body}</div>'


_META_BADGES = (
    ("isSummary", "summary"),
    ("isTruncationMarker", "marker"),
    ("condenseId", "condenseId"),
    ("condenseParent", "condenseParent"),
    ("truncationId", "truncationId"),
    ("truncationParent", "truncationParent"),
)


def _visibility(messages: Sequence[Any]) -> list[bool] | None:
    """The reference visibility (contract §2) when the messages load as a history; a malformed
    input (which fuzzing produces on purpose) is drawn without it."""
    from ctxmodel.codec import load
    from ctxmodel.errors import CtxmodelError
    from ctxmodel.visibility import visible_mask

    try:
        return visible_mask(load(list(messages)))
    except (CtxmodelError, TypeError, ValueError):
        return None


def conversation_html(messages: Any, *, highlight: Collection[str] = (), anchor_prefix: str = "c") -> str:
    """A history drawn as rows: role, metadata badges, then each block; tool pairs share a colour and
    each result links to its ``tool_use``; ``highlight`` paths (``messages.3.content.1``) are marked."""
    if not isinstance(messages, list):
        return f'<div class="raw">{_preview(_compact(messages), 600)}</div>'
    uses = {
        b["id"]
        for m in messages
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    }
    visible = _visibility(messages)
    rows = []
    for i, message in enumerate(messages):
        path = f"messages.{i}"
        cls = "msg"
        if path in highlight:
            cls += " offending"
        if visible is not None and not visible[i]:
            cls += " hidden"
        if not isinstance(message, dict):
            rows.append(
                f'<div class="{cls}" data-path="{path}"><span class="idx">{i}</span>{_e(_compact(message))}</div>'
            )
            continue
        role = message.get("role")
        role_s = role if isinstance(role, str) else _compact(role)
        badges = "".join(
            f'<span class="badge meta" title="{_e(key)}">{_e(label)}'
            + (f"={_e(message[key])}" if not isinstance(message[key], bool) else "")
            + "</span>"
            for key, label in _META_BADGES
            if key in message and message[key] not in (None, False)
        )
        if visible is not None and not visible[i]:
            badges += '<span class="badge hid">hidden</span>'
        content = message.get("content")
        if isinstance(content, str):
            blocks = f'<div class="blk k-string"><div class="txt">{_preview(content)}</div></div>'
        elif isinstance(content, list):
            blocks = "".join(
                _block_html(b, f"{path}.content.{j}", anchor_prefix, uses, highlight) for j, b in enumerate(content)
            )
        else:
            blocks = f'<div class="raw">{_e(_compact(content))}</div>'
        rows.append(
            f'<div class="{cls} r-{_e(role_s)}" data-path="{path}">'
            f'<div class="head"><span class="idx">{i}</span><span class="role">{_e(role_s)}</span>{badges}</div>'
            f'<div class="blocks">{blocks}</div></div>'
        )
    if not rows:
        return '<div class="raw">(no messages)</div>'
    return f'<div class="conv">{"".join(rows)}</div>'


def _chart(timeline: Sequence[Sequence[float]], failures: Sequence[Mapping[str, Any]]) -> str:
    """Examples over time as an inline SVG line, failures as red dots at the moment they were found."""
    width, height, pad = 640, 200, 40
    points = [(float(t), float(n)) for t, n, *_ in timeline] or [(0.0, 0.0)]
    t_max = max(max(t for t, _ in points), 1e-9)
    n_max = max(max(n for _, n in points), 1.0)

    def xy(t: float, n: float) -> tuple[float, float]:
        return pad + (width - 2 * pad) * t / t_max, height - pad - (height - 2 * pad) * n / n_max

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(t, n) for t, n in points))
    dots = []
    for failure in failures:
        t = float(failure.get("foundAt", 0.0))
        n = max((count for time, count in points if time <= t), default=0.0)
        x, y = xy(min(t, t_max), n)
        dots.append(
            f'<circle class="fail-dot" cx="{x:.1f}" cy="{y:.1f}" r="4">'
            f"<title>{_e(failure.get('kind', failure['property']))}</title></circle>"
        )
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="examples over time">'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" class="axis"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" class="axis"/>'
        f'<text x="{pad}" y="{pad - 8}" class="lbl">{int(n_max)} examples</text>'
        f'<text x="{width - pad}" y="{height - pad + 18}" class="lbl" text-anchor="end">{t_max:.1f} s</text>'
        f'<text x="{pad}" y="{height - pad + 18}" class="lbl">0</text>'
        f'<polyline points="{line}" class="series"/>{"".join(dots)}</svg>'
    )


#: Events Hypothesis records about its own work (filter retries, aborted draws), not about the input.
_INTERNAL_EVENTS = ("Retried draw from ", "Aborted test because ", "gave up because", "Draw for ")
#: The prefix of the events the strategies label each input's cells with (``ctxmodel.partition``).
CELL_EVENT = "cell: "


def shown_events(events: Mapping[str, int]) -> dict[str, int]:
    """The events worth a reader's time: Hypothesis's internal ones dropped."""
    return {k: v for k, v in events.items() if not k.startswith(_INTERNAL_EVENTS)}


def _property_rows(properties: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for prop in properties:
        names = [n for n in shown_events(prop["events"]) if not n.startswith(CELL_EVENT)]
        events = ", ".join(_e(name) for name in names[:8])
        more = len(names) - 8
        if more > 0:
            events += f" … (+{more})"
        skipped = f' title="{_e(prop["skipped"])}"' if prop.get("skipped") else ""
        rows.append(
            f'<tr data-property="{_e(prop["id"])}" class="st-{_e(prop["status"])}">'
            f'<td class="pid">{_e(prop["id"])}</td><td>{_e(prop["op"])}</td><td>{_e(prop["clause"])}</td>'
            f'<td class="num" data-figure="examples">{prop["examples"]}</td>'
            f'<td class="num" data-figure="distinctEvents">{prop["distinctEvents"]}</td>'
            f'<td class="num" data-figure="failures">{prop["failures"]}</td>'
            f'<td data-figure="status"{skipped}>{_e(prop["status"])}</td><td class="ev">{events}</td></tr>'
        )
    return "".join(rows)


@attrs.frozen
class _Ran:
    id: str
    op: str


def _coverage_html(properties: Sequence[Mapping[str, Any]], policies: Mapping[str, str]) -> str:
    """Per property, the cells of its op's partition it judges and reached (from the strategies'
    ``cell:`` events) and the ones it never reached; then per op the cells no property reached, the
    impossible ones, and those the target's declared input space leaves out (with the reason), which
    are not counted as missed: the same reading as ``ctxmodel check --coverage``."""
    from ctxmodel import partition

    cells = partition.Coverage(excluded=partition.excluded_by(policies))
    ran = []
    for prop in properties:
        ran.append(_Ran(prop["id"], prop["op"]))
        cells.examples[prop["id"]] = int(prop.get("examples", 0))
        cells.reached[prop["id"]] = Counter(
            {n[len(CELL_EVENT):]: c for n, c in prop["events"].items() if n.startswith(CELL_EVENT)}
        )
    rows = []
    covered = cells.rows(ran)
    for row in covered:
        reached = ", ".join(
            f"{_e(c.partition(':')[2])} {n}" for c, n in sorted(row.reached.items(), key=lambda kv: -kv[1])
        )
        rows.append(
            f'<tr data-coverage="{_e(row.id)}"{" class=st-failed" if row.never else ""}>'
            f'<td class="pid">{_e(row.id)}</td><td class="num" data-figure="judged">{len(row.judged)}</td>'
            f'<td class="num" data-figure="reached">{len(row.judged) - len(row.never) - len(row.excluded)}</td>'
            f'<td data-figure="never">{", ".join(_e(p.partition(":")[2]) for p in row.never) or "-"}</td>'
            f'<td data-figure="left-out">{", ".join(_e(p.partition(":")[2]) for p in row.excluded) or "-"}</td>'
            f'<td class="ev">{reached}</td></tr>'
        )
    if not rows:
        return '<p class="none">No property of an op with a partition (recover, effective, normalize, trim) ran.</p>'
    ops = []
    for o in partition.op_summaries(covered, cells.excluded):
        impossible = ", ".join(name for names in o.impossible.values() for name in names)
        ops.append(
            f'<li data-op="{_e(o.op)}"><b>{_e(o.op)}</b>: <span data-figure="cells-reached">'
            f"{o.reached}</span> of {o.possible} possible cells reached; never "
            f'reached: <span data-figure="cells-never">{_e(", ".join(o.missing)) or "-"}</span>'
            + (f"; impossible: {_e(impossible)}" if impossible else "")
            + "".join(
                f'; left out: <span data-figure="cells-left-out">{_e(", ".join(names))}</span> ({_e(reason)})'
                for reason, names in o.left_out.items()
            )
            + "</li>"
        )
    return (
        '<table class="coverage"><thead><tr><th>property</th><th>cells judged</th><th>reached</th>'
        "<th>never reached</th><th>left out by the declared inputs</th><th>cells reached (examples)</th></tr>"
        f'</thead><tbody>{"".join(rows)}</tbody></table><ul class="ops">{"".join(ops)}</ul>'
    )


def _event_rows(events: Mapping[str, int]) -> str:
    ordered = sorted(shown_events(events).items(), key=lambda kv: (-kv[1], kv[0]))
    return "".join(
        f'<tr data-event="{_e(name)}"><td>{_e(name)}</td><td class="num" data-figure="count">{count}</td></tr>'
        for name, count in ordered
    )


def _failure_html(index: int, failure: Mapping[str, Any], not_written: str = "not written") -> str:
    highlight = set(failure.get("highlight", ()))
    params = failure.get("params") or {}
    observed = failure.get("observed")
    prefix = f"f{index}"
    findings = "".join(f"<li>{_e(text)}</li>" for text in failure.get("findings", ()))
    extra = {k: v for k, v in params.items() if k not in ("messages", "policies")}
    extra_html = "".join(f"<tr><td>{_e(k)}</td><td>{_e(_compact(v))}</td></tr>" for k, v in extra.items())
    steps = failure.get("steps") or ()
    steps_html = (
        '<details open><summary>step sequence ({} steps)</summary><ol class="steps">{}</ol></details>'.format(
            len(steps), "".join(f"<li><code>{_e(s)}</code></li>" for s in steps)
        )
        if steps
        else ""
    )
    if failure.get("targetFailure"):
        returned = f'<div class="raw err">{_e(failure["targetFailure"])}</div>'
    elif isinstance(observed, Mapping) and isinstance(observed.get("messages"), list):
        rest = {k: v for k, v in observed.items() if k != "messages"}
        rest_html = f'<div class="raw">{_e(_compact(rest))}</div>' if rest else ""
        returned = rest_html + conversation_html(observed["messages"], highlight=highlight, anchor_prefix=prefix + "o")
    else:
        returned = f'<div class="raw">{_preview(_compact(observed), 2000)}</div>'
    fixture = failure.get("fixture")
    fixture_html = f'<code data-figure="fixture">{_e(fixture)}</code>' if fixture else f"<em>{_e(not_written)}</em>"
    kind = failure.get("kind", failure["property"])
    shrunk = (
        "" if failure.get("shrunk", True) else ' <span class="badge err">not fully shrunk (campaign stopped)</span>'
    )
    return (
        f'<section class="failure" id="failure-{index}" data-failure="{index}" '
        f'data-property="{_e(failure["property"])}" data-kind="{_e(kind)}">'
        f'<h3><span data-figure="kind">{_e(kind)}</span> <small>{_e(failure["op"])} · '
        f"{_e(failure['clause'])} · property "
        f'<span data-figure="property">{_e(failure["property"])}</span></small>{shrunk}</h3>'
        f'<ul class="findings">{findings}</ul>'
        f"<p>fixture: {fixture_html} · worker {_e(failure['worker'])} · found after "
        f'<span data-figure="foundAt">{_e(failure["foundAt"])}</span> s, '
        f'<span data-figure="examplesUntilFailure">{_e(failure["examplesUntilFailure"])}</span> examples</p>'
        f"{steps_html}" + (f'<table class="params">{extra_html}</table>' if extra_html else "") + '<div class="pair">'
        f'<div class="side"><h4>input (<code>params.messages</code>)</h4>'
        f"{conversation_html(params.get('messages'), highlight=highlight, anchor_prefix=prefix + 'i')}</div>"
        f'<div class="side"><h4>what the target returned</h4>{returned}</div>'
        "</div></section>"
    )


def _kinds_summary(failures: Sequence[Mapping[str, Any]]) -> str:
    """Per failing property, its kinds (as ``ctxmodel check`` lists them), each linked to its section."""
    by_property: dict[str, list[tuple[int, str]]] = {}
    for i, failure in enumerate(failures):
        by_property.setdefault(failure["property"], []).append((i, failure.get("kind", failure["property"])))
    items = "".join(
        f'<li data-kinds="{_e(prop)}"><b>{_e(prop)}</b>: <span data-figure="kinds">{len(kinds)}</span> '
        f"kind{'' if len(kinds) == 1 else 's'}: "
        + ", ".join(f'<a href="#failure-{i}">{_e(kind)}</a>' for i, kind in kinds)
        + "</li>"
        for prop, kinds in by_property.items()
    )
    return f'<ul class="kinds">{items}</ul>'


def _machines_html(machines: Sequence[Mapping[str, Any]]) -> str:
    """The machines that joined a Redis campaign, each with its own seed and why it stopped."""
    if not machines:
        return ""
    rows = "".join(
        f'<tr data-machine="{_e(m.get("host"))}:{_e(m.get("pid"))}"><td>{_e(m.get("host"))}:{_e(m.get("pid"))}</td>'
        f'<td class="num">{_e(m.get("workers"))}</td><td class="num">{_e(m.get("seed"))}</td>'
        f'<td>{_e(m.get("started"))}</td><td class="num">{_e(m.get("examples"))}</td>'
        f'<td>{_e(", ".join(m.get("kinds", [])) or "-")}</td><td>{_e(m.get("stopped"))}</td></tr>'
        for m in machines
    )
    return (
        '<table class="machines"><thead><tr><th>machine</th><th>workers</th><th>seed</th><th>started</th>'
        f"<th>examples</th><th>kinds it claimed</th><th>stopped</th></tr></thead><tbody>{rows}</tbody></table>"
    )


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:.2em 0}small{color:#666;font-weight:normal}
dl.totals{display:flex;gap:2em;margin:.6em 0}dl.totals div{background:#fff;border:1px solid #ddd;padding:.4em .8em}
dl.totals dt{color:#666;font-size:.85em}dl.totals dd{margin:0;font-size:1.4em;font-weight:600}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #ddd;padding:.2em .5em;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.st-failed td{background:#fde8e8}
tr.st-skipped td{color:#888}td.ev{font-size:.8em;color:#555;max-width:28em}
.chart{width:100%;max-width:700px;background:#fff;border:1px solid #ddd}.chart .axis{stroke:#999}
.chart .series{fill:none;stroke:#2761c4;stroke-width:2}.chart .lbl{font-size:11px;fill:#555}
.fail-dot{fill:#d22}
.failure{background:#fff;border:1px solid #e3b3b3;border-left:5px solid #d22;padding:.6em 1em;margin:1em 0}
.pair{display:flex;gap:1em;align-items:flex-start}.side{flex:1;min-width:0}
.conv{border:1px solid #ddd}.msg{border-bottom:1px solid #eee;padding:.3em .5em}
.msg.r-user{background:#f4f8ff}.msg.r-assistant{background:#f7f7f2}.msg.hidden{opacity:.5}
.head{display:flex;gap:.4em;align-items:center;font-size:.85em}.idx{color:#888;min-width:1.5em}
.role{font-weight:600}.badge{border-radius:3px;padding:0 .3em;font-size:.8em;background:#e6e6e6}
.badge.err{background:#fcd4d4;color:#900}.badge.hid{background:#ddd;color:#555}
.blk{margin:.2em 0 .2em 2em;padding:.15em .4em;border-left:3px solid #ccc;background:rgba(255,255,255,.7)}
.blk .kind{font-size:.75em;color:#777;margin-right:.5em}
.offending{outline:3px solid #d22;background:#fff0f0 !important}
.txt{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;font-size:.85em}
.raw{white-space:pre-wrap;word-break:break-all;font-family:ui-monospace,monospace;font-size:.8em;color:#444}
.raw.err{color:#900}.dim{color:#888}.more{color:#999;font-style:italic}
.tid{font-family:ui-monospace,monospace;font-size:.85em;padding:0 .3em;border-radius:3px;
background:hsl(var(--hue,0),70%,88%);border:1px solid hsl(var(--hue,0),50%,60%);text-decoration:none;color:#111}
.tid.orphan{border-style:dashed}.tid.bad{background:#fcc}.tid.lit{box-shadow:0 0 0 3px hsl(var(--hue,0),80%,50%)}
.img{font-size:.8em;background:#eef;border:1px solid #99c;padding:0 .3em}
.steps code{font-size:.85em}.params td{font-family:ui-monospace,monospace;font-size:.85em}
footer{margin-top:2em;color:#888;font-size:.8em}
"""

# Cross-checks the drawn totals against the embedded report.json and lights up a tool pair on hover.
# It records its outcome on <html data-ready>, which the browser test reads back from the DOM.
_JS = """
(function(){
  var root=document.documentElement;
  window.addEventListener('error',function(e){root.setAttribute('data-errors',String(e.message||e));});
  var data=JSON.parse(document.getElementById('report-data').textContent);
  var bad=[];
  ['examples','failures','distinctEvents','properties'].forEach(function(k){
    var el=document.querySelector('[data-total="'+k+'"]');
    if(!el||Number(el.textContent)!==data.totals[k]){bad.push(k);}
  });
  if(document.querySelectorAll('section.failure').length!==data.failures.length){bad.push('failure-sections');}
  document.querySelectorAll('.tid[data-tool-id]').forEach(function(el){
    var id=el.getAttribute('data-tool-id');
    var scope=el.closest('.conv');
    function mates(){return scope?scope.querySelectorAll('.tid[data-tool-id="'+CSS.escape(id)+'"]'):[];}
    el.addEventListener('mouseenter',function(){mates().forEach(function(m){m.classList.add('lit');});});
    el.addEventListener('mouseleave',function(){mates().forEach(function(m){m.classList.remove('lit');});});
  });
  root.setAttribute('data-ready',bad.length?('mismatch:'+bad.join(',')):'ok');
})();
"""


def render_html(data: Mapping[str, Any]) -> str:
    """The page for a ``report.json`` value (the HTML is a view of that one value, nothing more)."""
    totals = data["totals"]
    target = data.get("target", {})
    title = f"ctxmodel fuzz: {target.get('name', '?')} {target.get('version', '')}".strip()
    embedded = json.dumps(data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    failures = data.get("failures", [])
    campaign = data.get("campaign")
    not_written = (
        "kept in the campaign: ctxmodel fuzz report --fixtures DIR writes it" if campaign else "not written"
    )
    failures_html = (
        _kinds_summary(failures) + "".join(_failure_html(i, f, not_written) for i, f in enumerate(failures))
        if failures
        else '<p class="none">No property failed.</p>'
    )
    meta = " · ".join(
        f"{_e(k)}: {_e(v)}"
        for k, v in (
            *((("campaign", campaign),) if campaign else ()),
            ("target", target.get("spec", target.get("name", "?"))),
            ("database", data.get("database")),
            ("workers", data.get("workers")),
            ("seed", data.get("seed")),
            ("started", data.get("started")),
            ("duration", f"{data.get('durationSeconds')} s"),
            ("stopped", data.get("stopped")),
            ("exit code", data.get("exitCode")),
        )
    )
    versions = " · ".join(f"{_e(k)} {_e(v)}" for k, v in data.get("versions", {}).items())
    policies = ", ".join(f"{_e(k)}={_e(v)}" for k, v in data.get("policies", {}).items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="meta">{meta}</p>
<p class="meta">policies: {policies}</p>{_machines_html(data.get("machines", []))}
<dl class="totals">
<div><dt>examples</dt><dd data-total="examples">{totals["examples"]}</dd></div>
<div><dt>examples/s</dt><dd data-total="examplesPerSecond">{totals["examplesPerSecond"]}</dd></div>
<div><dt>failing kinds</dt><dd data-total="failures">{totals["failures"]}</dd></div>
<div><dt>distinct events</dt><dd data-total="distinctEvents">{totals["distinctEvents"]}</dd></div>
<div><dt>properties</dt><dd data-total="properties">{totals["properties"]}</dd></div>
</dl>
<h2>Examples over time</h2>
{_chart(data.get("timeline", []), failures)}
<h2>Failures</h2>
{failures_html}
<h2>Properties</h2>
<table class="props"><thead><tr><th>property</th><th>op</th><th>clause</th><th>examples</th>
<th>distinct events</th><th>failing kinds</th><th>status</th><th>events seen</th></tr></thead>
<tbody>{_property_rows(data.get("properties", []))}</tbody></table>
<h2>Coverage of the contract's cells</h2>
{_coverage_html(data.get("properties", []), data.get("policies", {}))}
<h2>Features and events covered</h2>
<table class="events"><thead><tr><th>event</th><th>examples</th></tr></thead>
<tbody>{_event_rows(data.get("events", {}))}</tbody></table>
<footer>{versions}</footer>
<script type="application/json" id="report-data">{embedded}</script>
<script>{_JS}</script>
</body></html>
"""
