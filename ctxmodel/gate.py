"""Running property suites against a target under Hypothesis (contract §7, §8, §9).

One Hypothesis test per property, built at run time: ``@given(prop.params(policies))``, a body
that drives a fresh ``TargetProbe`` through ``prop.check`` and fails on any ``fail`` finding.
Anything the target does instead of answering (crash, hang, garbage, an exception) is a failure
of that property *for that input*, so it is shrunk and kept like any other. Hypothesis replays
the shrunk example last, so the last failing params and exchanges we saw are the minimal ones:
they are written as a fixture (atomically, before anything is printed), then reported.

Every runner (``ctxmodel check``, the pytest plugin, ``ctxmodel replay``) goes through
``judge`` so a property means the same thing wherever it runs.
"""

from __future__ import annotations

import contextlib
import json
import random
import shlex
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree

import attrs
import hypothesis
from hypothesis import example, given
from hypothesis.errors import HypothesisException
from hypothesis.reporting import with_reporter

from ctxmodel import exitcodes
from ctxmodel.codec import copy_json
from ctxmodel.errors import CtxmodelError
from ctxmodel.fixtures import Fixture, exchanges_json, fixture_name, found_now, write_atomic
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Finding, Probe, Property
from ctxmodel.targets.base import Target, TargetFailure
from ctxmodel.targets.reference import describe_exception

__all__ = [
    "Judgement",
    "Outcome",
    "ProbeFactory",
    "exit_code",
    "format_failure",
    "format_summary",
    "judge",
    "junit_xml",
    "run_gate",
    "run_property",
]

Status = Literal["passed", "failed", "skipped", "error"]
ProbeFactory = Callable[[Target, Mapping[str, str], str], Probe]
#: Distinct warnings kept per property (the rest are counted), so a noisy target stays readable.
MAX_WARNINGS = 5


def _default_probe(target: Target, policies: Mapping[str, str], tokenizer: str) -> Probe:
    from ctxmodel.properties.probe import TargetProbe

    return TargetProbe(target, policies, tokenizer)


@attrs.frozen
class Judgement:
    findings: tuple[Finding, ...]
    #: The probe's exchanges (``ctxmodel.properties.probe.Exchange``): op, params, result or failure.
    calls: tuple[Any, ...]

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "fail")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warn")

    @property
    def failed(self) -> bool:
        return bool(self.failures)


def judge(
    prop: Property,
    target: Target,
    params: dict[str, Any],
    *,
    policies: Mapping[str, str],
    tokenizer: str,
    probe_factory: ProbeFactory | None = None,
) -> Judgement:
    """Run one check on one input. A target that fails to answer fails the property (contract §7);
    a check that cannot read the target's reply does too, naming the exception, so the run goes on."""
    probe = (probe_factory or _default_probe)(target, policies, tokenizer)
    try:
        findings = tuple(prop.check(probe, params))
    except TargetFailure as exc:
        findings = (Finding.fail(f"the target did not answer: {exc}", "a JSON-object reply (contract §7)"),)
    except HypothesisException:
        raise
    except CtxmodelError as exc:
        findings = (Finding.fail(f"the target's reply is unusable: {exc}", "a reply of contract §7's shape"),)
    except Exception as exc:
        findings = (
            Finding.fail(
                f"the check could not judge the target's reply: {describe_exception(exc)}",
                "a reply of contract §7's shape",
            ),
        )
    return Judgement(findings, tuple(getattr(probe, "calls", ())))


@attrs.frozen
class Outcome:
    prop: Property
    status: Status
    examples: int = 0
    failures: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    warnings_total: int = 0
    params: dict[str, Any] | None = None
    calls: tuple[Any, ...] = ()
    fixture: Path | None = None
    reason: str = ""
    seconds: float = 0.0
    flaky: bool = False
    blob: str = ""


class _PropertyFailed(AssertionError):
    def __init__(self, failures: Sequence[Finding]) -> None:
        super().__init__("; ".join(f.message for f in failures))
        self.failures = tuple(failures)


@attrs.define
class _State:
    examples: int = 0
    last: tuple[dict[str, Any], Judgement] | None = None
    warnings: dict[str, Finding] = attrs.field(factory=dict)
    warnings_total: int = 0

    def warn(self, finding: Finding) -> None:
        if finding.message in self.warnings:
            return
        self.warnings_total += 1
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings[finding.message] = finding


def property_seed(run_seed: int, prop_id: str) -> int:
    """Each property its own stream, all derived from the one seed a run prints."""
    return (run_seed * 1_000_003 + zlib.crc32(prop_id.encode())) % (2**32)


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Keep Hypothesis from mining literals out of whatever modules happen to be imported.

    Hypothesis draws, now and then, constants it collected from every local module in
    ``sys.modules``; so the same seed drew different examples depending on what ran before in the
    process (a zoo variant imported earlier, a test module), and a gate verdict could change with
    the order properties ran in. A run must be replayable from its seed alone (contract §8), so the
    local pool is empty for the duration; Hypothesis's own global constants stay. Private API:
    when it is missing this does nothing, and ``tests/test_gate.py`` notices.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module
        yield
        return
    getter = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if getter is None or cache is None:  # pragma: no cover - a Hypothesis without constant mining
        yield
        return
    empty = type(providers._local_constants)()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = getter
        cache.cache.clear()


def run_property(
    prop: Property,
    target: Target,
    *,
    policies: Mapping[str, str],
    tokenizer: str,
    profile: Profile,
    fixtures_dir: str | Path,
    target_spec: str,
    seed: int = 0,
    max_examples: int | None = None,
    database: Any = "default",
    examples: Iterable[dict[str, Any]] = (),
    probe_factory: ProbeFactory | None = None,
) -> Outcome:
    started = time.monotonic()
    missing = sorted(set(prop.requires) - set(target.description.ops))
    if missing:
        return Outcome(prop, "skipped", reason=f"target has no {', '.join(missing)}")
    try:
        strategy = prop.params(policies)
    except Exception as exc:
        return Outcome(prop, "error", reason=f"cannot build the params strategy: {describe_exception(exc)}")
    state = _State()

    def body(params: dict[str, Any]) -> None:
        state.examples += 1
        kept = copy_json(params)
        verdict = judge(prop, target, params, policies=policies, tokenizer=tokenizer, probe_factory=probe_factory)
        for finding in verdict.warnings:
            state.warn(finding)
        if verdict.failed:
            state.last = (kept, verdict)
            raise _PropertyFailed(verdict.failures)

    # Distinct database keys and random streams per property and target: the body's source is
    # shared, and in a shared database one target's stored failures must not be replayed (and then
    # deleted as fixed) by a run against another.
    digest = f"ctxmodel:{target.description.name}:{prop.id}"
    body._hypothesis_internal_add_digest = digest.encode()  # type: ignore[attr-defined]
    test: Any = given(strategy)(body)
    for params in examples:
        test = example(params)(test)
    test = profile.hypothesis_settings(max_examples=max_examples, database=database)(test)
    # Not ``hypothesis.seed()``: it also sets ``database=None``, which would switch off the very
    # database the profiles set explicitly (harness-lessons pitfall 4).
    test._hypothesis_internal_use_seed = property_seed(seed, prop.id)

    error: BaseException | None = None
    try:
        with with_reporter(lambda _: None), _without_local_constants():
            test()
    except _PropertyFailed as exc:
        error = exc
    except Exception as exc:  # Flaky, health checks, bugs in a strategy
        error = exc
    seconds = time.monotonic() - started
    if error is None:
        return Outcome(
            prop,
            "passed",
            examples=state.examples,
            warnings=tuple(state.warnings.values()),
            warnings_total=state.warnings_total,
            seconds=seconds,
        )
    if state.last is None:
        return Outcome(
            prop,
            "error",
            examples=state.examples,
            reason=f"Hypothesis could not run this property: {describe_exception(error)}",
            seconds=seconds,
        )
    params, verdict = state.last
    fixture = Fixture(
        property=prop.id,
        op=prop.op,
        params=params,
        observed=exchanges_json(verdict.calls),
        target={"name": target.description.name, "version": target.description.version},
        policies=dict(policies),
        tokenizer=tokenizer,
        found=found_now(seed, hypothesis.__version__),
        note="\n".join([*(f.message for f in verdict.failures), prop.clause]),
    )
    path = write_atomic(Path(fixtures_dir) / fixture_name(prop.id, params), fixture.to_json())
    notes = getattr(error, "__notes__", None) or []
    blob = next((n.strip() for n in notes if "reproduce_failure" in n), "")
    return Outcome(
        prop,
        "failed",
        examples=state.examples,
        failures=verdict.failures,
        warnings=tuple(state.warnings.values()),
        warnings_total=state.warnings_total,
        params=params,
        calls=verdict.calls,
        fixture=path,
        seconds=seconds,
        flaky=not isinstance(error, _PropertyFailed),
        blob=blob,
    )


@attrs.frozen
class GateReport:
    outcomes: tuple[Outcome, ...]
    seed: int
    profile: str


def run_gate(
    target: Target,
    props: Sequence[Property],
    *,
    policies: Mapping[str, str],
    profile: Profile,
    fixtures_dir: str | Path,
    target_spec: str,
    seed: int | None = None,
    max_examples: int | None = None,
    database: Any = "default",
    regressions: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    probe_factory: ProbeFactory | None = None,
) -> GateReport:
    """Every property in turn; ``regressions`` (params by property id) run first as explicit examples."""
    run_seed = seed if seed is not None else (0 if profile.deterministic else random.getrandbits(32))
    outcomes: list[Outcome] = []
    for prop in props:
        outcome = run_property(
            prop,
            target,
            policies=policies,
            tokenizer=target.description.tokenizer,
            profile=profile,
            fixtures_dir=fixtures_dir,
            target_spec=target_spec,
            seed=run_seed,
            max_examples=max_examples,
            database=database,
            examples=(regressions or {}).get(prop.id, ()),
            probe_factory=probe_factory,
        )
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return GateReport(tuple(outcomes), run_seed, profile.name)


def exit_code(outcomes: Iterable[Outcome]) -> int:
    """Contract §9: 1 when a property failed (its fixture is written); 2 when a property could not
    run at all (a harness or strategy problem, no fixture); else 0. Warnings never fail."""
    statuses = {o.status for o in outcomes}
    if "failed" in statuses:
        return exitcodes.FAILED
    if "error" in statuses:
        return exitcodes.USAGE
    return exitcodes.OK


# -- reporting -------------------------------------------------------------------------------


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


def render_reply(outcome: Outcome, indent: str = "    ") -> str:
    judged = [c for c in outcome.calls if c.op == outcome.prop.op] or list(outcome.calls)
    if not judged:
        return indent + "(no call reached the target)"
    last = judged[-1]
    if last.failure is not None:
        return f"{indent}{last.op} failed: {last.failure}"
    result = last.result or {}
    lines = [f"{indent}{last.op} returned:"]
    others = {k: v for k, v in result.items() if k != "messages"}
    if others:
        lines.append(indent + "  " + "  ".join(f"{k}={_compact(v, 200)}" for k, v in others.items()))
    if "messages" in result:
        lines.append(render_messages(result["messages"], indent + "  "))
    return "\n".join(lines)


def reproduce_command(fixture: Path | str, target_spec: str) -> str:
    return f"ctxmodel replay {shlex.quote(str(fixture))} --target {shlex.quote(target_spec)}"


def format_failure(outcome: Outcome, target_spec: str) -> str:
    prop = outcome.prop
    head = f"FAILED {prop.id} ({prop.clause})"
    if outcome.flaky:
        head += " [flaky: the target answered differently when the input was replayed]"
    lines = [head, f"  {prop.summary}"]
    for finding in outcome.failures:
        lines.append(f"  found:    {finding.message}")
        if finding.expected:
            lines.append(f"  required: {finding.expected}")
    if outcome.params is not None:
        lines.append("  minimal input:")
        lines.append(render_params(outcome.params))
    lines.append("  the target:")
    lines.append(render_reply(outcome))
    if outcome.fixture is not None:
        lines.append(f"  fixture: {outcome.fixture}")
        lines.append(f"  Reproduce with: {reproduce_command(outcome.fixture, target_spec)}")
    return "\n".join(lines)


def status_word(outcome: Outcome) -> str:
    if outcome.status == "passed":
        return f"passed, {outcome.warnings_total} warning(s)" if outcome.warnings_total else "passed"
    if outcome.status == "failed":
        return "FAILED"
    if outcome.status == "error":
        return "ERROR"
    return f"skipped: {outcome.reason}"


def format_warnings(outcomes: Iterable[Outcome]) -> str:
    lines: list[str] = []
    for outcome in outcomes:
        for finding in outcome.warnings:
            lines.append(f"  {outcome.prop.id}: {finding.message}")
        hidden = outcome.warnings_total - len(outcome.warnings)
        if hidden > 0:
            lines.append(f"  {outcome.prop.id}: … and {hidden} more")
    return "Warnings (not failures):\n" + "\n".join(lines) if lines else ""


def format_summary(outcomes: Sequence[Outcome]) -> str:
    width = max([len("property"), *(len(o.prop.id) for o in outcomes)])
    lines = [f"{'property':<{width}}  {'examples':>8}  result"]
    for o in outcomes:
        lines.append(f"{o.prop.id:<{width}}  {o.examples:>8}  {status_word(o)}")
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("passed", "failed", "skipped", "error")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no properties selected")
    return "\n".join(lines)


def junit_xml(outcomes: Sequence[Outcome], *, target_spec: str, suite: str = "ctxmodel") -> str:
    """One testcase per property (harness-lessons lesson 7), for CI dashboards."""
    root = ElementTree.Element(
        "testsuite",
        name=suite,
        tests=str(len(outcomes)),
        failures=str(sum(o.status == "failed" for o in outcomes)),
        errors=str(sum(o.status == "error" for o in outcomes)),
        skipped=str(sum(o.status == "skipped" for o in outcomes)),
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
        elif o.status == "error":
            ElementTree.SubElement(case, "error", message=o.reason)
        elif o.status == "skipped":
            ElementTree.SubElement(case, "skipped", message=o.reason)
        if o.warnings:
            out = ElementTree.SubElement(case, "system-out")
            out.text = "\n".join(f"warning: {w.message}" for w in o.warnings)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
