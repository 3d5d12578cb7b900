"""The engine: running properties against a target under Hypothesis (contract §7, §8, §9).

One Hypothesis test per property, built at run time: ``@given(prop.inputs(policies))``, a body that
makes the property's one primary call through a fresh ``TargetProbe`` and hands the exchange to the
property's check. Every finding has a kind (the property and the finding's code; a target fault is a
kind of its own, whichever property met it); each kind raises its own exception type, so Hypothesis
keeps the kinds apart: each is shrunk on its own (a shrink never ends on another kind) and written as
its own fixture, atomically, before anything is reported.

Every runner (``ctxmodel check``, the pytest plugin, ``ctxmodel replay``, the fuzz agent loop) judges
through ``judge`` or ``judge_exchange``, so a property means the same thing wherever it runs.
Rendering the outcomes is ``ctxmodel.report``'s job.
"""

from __future__ import annotations

import random
import signal
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs
import hypothesis
from hypothesis import Phase, example, given
from hypothesis.errors import HypothesisException, HypothesisWarning
from hypothesis.reporting import with_reporter

from ctxmodel import exitcodes
from ctxmodel.codec import copy_json
from ctxmodel.errors import CtxmodelError, describe_exception
from ctxmodel.fixtures import Fixture, FixtureError, exchanges_json, fixture_name, found_now, write_atomic
from ctxmodel.hypothesis_hooks import set_database_key, set_seed, without_local_constants
from ctxmodel.policies import resolve as resolve_policies
from ctxmodel.profiles import Profile
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property
from ctxmodel.properties.judge import Malformed
from ctxmodel.properties.probe import TargetProbe
from ctxmodel.strategies.labels import steering
from ctxmodel.targets.base import Target, TargetFailure
from ctxmodel.trim import StopTrim, trim_request

__all__ = [
    "Judgement",
    "Kind",
    "Outcome",
    "exit_code",
    "judge",
    "judge_exchange",
    "judge_primary",
    "replay",
    "run_gate",
    "run_property",
]

Status = Literal["passed", "failed", "skipped", "error", "never-run"]
#: Distinct warnings kept per property (the rest are counted), so a noisy target stays readable.
MAX_WARNINGS = 5
#: Seconds a property may run before the engine says it is still at work.
HEARTBEAT_SECONDS = 10.0


def fault_finding(exc: TargetFailure, op: str) -> Finding:
    """A target that did not answer: a finding of its own kind (``target-timeout``, ...), not a
    verdict on the property that happened to draw the input (contract §8)."""
    return Finding.fail(
        f"the target did not answer {op}: {exc}", "a JSON-object reply (contract §7)", code=f"target-{exc.kind}"
    )


def _unusable(exc: Exception) -> Finding:
    return Finding.fail(f"the target's reply is unusable: {exc}", "a reply of contract §7's shape", code="malformed")


def judge_exchange(prop: Property, probe: Probe, exchange: Exchange) -> tuple[Finding, ...]:
    """Run one check on one exchange. A reply the check cannot read fails the property with one line;
    a follow-up call the target does not answer is a target fault."""
    try:
        return tuple(prop.check(probe, exchange))
    except TargetFailure as exc:
        return (fault_finding(exc, exchange.op),)
    except HypothesisException:
        raise
    except (Malformed, CtxmodelError) as exc:
        return (_unusable(exc),)
    except Exception as exc:
        return (
            Finding.fail(
                f"the check could not judge the target's reply: {describe_exception(exc)}",
                "a reply of contract §7's shape",
                code="unjudgeable",
            ),
        )


@attrs.frozen
class Judgement:
    findings: tuple[Finding, ...]
    #: The probe's calls (``ctxmodel.properties.probe.Call``): op, params, result or failure.
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
    prop: Property, target: Target, params: dict[str, Any], *, policies: Mapping[str, str], tokenizer: str
) -> Judgement:
    """Make the property's primary call once and judge the exchange (contract §7)."""
    probe = TargetProbe(target, policies, tokenizer)
    exchange, fault = judge_primary(prop, probe, params)
    if fault is not None:
        return Judgement((fault,), tuple(probe.calls))
    assert exchange is not None
    return Judgement(judge_exchange(prop, probe, exchange), tuple(probe.calls))


def judge_primary(prop: Property, probe: Probe, params: dict[str, Any]) -> tuple[Exchange | None, Finding | None]:
    """The property's one primary call: the exchange, or the finding of a call that got no usable reply."""
    try:
        return prop.primary(probe, params), None
    except TargetFailure as exc:
        return None, fault_finding(exc, prop.op)
    except (Malformed, CtxmodelError) as exc:
        return None, _unusable(exc)


def replay(
    fixture: Fixture,
    target: Target,
    *,
    policies: Mapping[str, str] | None = None,
    source: str = "",
    resolve: Callable[[str], Property] | None = None,
) -> Judgement:
    """Run the fixture's property once on its params, by value (contract §8). The fixture's recorded
    policies are what its check judged against, so they are the base; ``policies`` override them.
    ``resolve`` finds the property by id (the registry's by default)."""
    from ctxmodel.properties.registry import get

    find = resolve or get
    try:
        prop = find(fixture.property)
    except KeyError:
        raise FixtureError(source, "property", f"unknown property {fixture.property!r}") from None
    chosen = resolve_policies(fixture.policies, policies)
    return judge(prop, target, copy_json(fixture.params), policies=chosen, tokenizer=fixture.tokenizer)


@attrs.frozen
class Kind:
    """One distinct finding of a run: its kind, its minimal input and what the target did there."""

    key: str
    finding: Finding
    params: dict[str, Any]
    calls: tuple[Any, ...]
    #: The example (1-based) at which this kind was first met.
    first_example: int
    fixture: Path | None = None

    @property
    def severity(self) -> str:
        return self.finding.severity


@attrs.frozen
class Outcome:
    prop: Property
    status: Status
    #: Examples generated (shrink steps are counted apart).
    examples: int = 0
    shrink_steps: int = 0
    #: Distinct failing kinds, each with its minimal input and fixture.
    kinds: tuple[Kind, ...] = ()
    #: Distinct warnings, each with its input (and its fixture).
    warned: tuple[Kind, ...] = ()
    warnings_total: int = 0
    reason: str = ""
    seconds: float = 0.0
    flaky: bool = False
    #: Kinds of a baseline this property still fails on (``ctxmodel.baseline``): not failures of the
    #: run, and not shrunk again when their baseline fixture already holds a minimal input.
    known: tuple[str, ...] = ()

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(k.finding for k in self.kinds)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(k.finding for k in self.warned)

    @property
    def fixtures(self) -> tuple[Path, ...]:
        return tuple(k.fixture for k in (*self.kinds, *self.warned) if k.fixture is not None)


def finding_key(prop: Property, finding: Finding) -> str:
    """A target fault is one kind whichever property met it; anything else is the property's."""
    if finding.code.startswith("target-"):
        return finding.code
    return f"{prop.id}/{finding.code}" if finding.code else prop.id


_KIND_ERRORS: dict[str, type[AssertionError]] = {}


class PropertyFailed(AssertionError):
    """Raised by the body for one kind; a subclass per kind keeps Hypothesis's failures apart."""

    key = ""

    def __init__(self, findings: Sequence[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = tuple(findings)


def _error_for(key: str) -> type[AssertionError]:
    if key not in _KIND_ERRORS:
        _KIND_ERRORS[key] = type(f"Failed[{key}]", (PropertyFailed,), {"key": key})
    return _KIND_ERRORS[key]


@attrs.define
class _State:
    examples: int = 0
    shrink_steps: int = 0
    failing: bool = False
    #: The last input each kind failed on: Hypothesis replays each kind's minimal example last.
    last: dict[str, tuple[dict[str, Any], Finding, tuple[Any, ...], int]] = attrs.field(factory=dict)
    first_seen: dict[str, int] = attrs.field(factory=dict)
    warned: dict[str, tuple[dict[str, Any], Finding, tuple[Any, ...], int]] = attrs.field(factory=dict)
    warnings_total: int = 0
    #: Known kinds met, with the example they were first met at.
    known_met: dict[str, int] = attrs.field(factory=dict)
    started: float = attrs.field(factory=time.monotonic)
    beat: float = attrs.field(factory=time.monotonic)
    saved_timeout: float | None = None


#: While a timeout is being shrunk, each request waits this share of the run's timeout (at least
#: ``MIN_SHRINK_TIMEOUT`` s): a hang hangs either way, and shrinking one took minutes of silence.
SHRINK_TIMEOUT_SHARE = 0.2
MIN_SHRINK_TIMEOUT = 0.5


def _shorten_timeout(target: Target, state: _State) -> None:
    timeout = getattr(target, "timeout", None)
    if isinstance(timeout, int | float) and state.saved_timeout is None:
        state.saved_timeout = float(timeout)
        target.timeout = max(MIN_SHRINK_TIMEOUT, SHRINK_TIMEOUT_SHARE * float(timeout))  # type: ignore[attr-defined]


def property_seed(run_seed: int, prop_id: str) -> int:
    """Each property its own stream, all derived from the one seed a run prints."""
    return (run_seed * 1_000_003 + zlib.crc32(prop_id.encode())) % (2**32)


@attrs.frozen
class RunOptions:
    """How a run treats what it finds: ``strict`` fails on warnings (contract §8); ``known_faults``
    are target-fault kinds already reported by an earlier property of the run, which a later
    property does not report again (it goes on with other inputs). ``known_kinds`` are a baseline's
    kinds whose fixture still reproduces: met, they are noted and neither raised nor shrunk, so the
    search goes on looking for kinds that are new."""

    strict: bool = False
    known_faults: frozenset[str] = frozenset()
    known_kinds: frozenset[str] = frozenset()
    heartbeat: Callable[[str], None] | None = None
    #: Called with every generated input (not shrink steps): what ``--coverage`` counts.
    on_example: Callable[[Property, dict[str, Any]], None] | None = None
    #: Called with the key of every finding the body meets, shrink steps and known faults included:
    #: a run that met none of a set of keys would have gone the same way had they been known faults.
    on_finding: Callable[[str], None] | None = None
    #: Drop the messages a failure does not need once Hypothesis has shrunk it (``ctxmodel.trim``).
    trim: bool = True


def run_property(
    prop: Property,
    target: Target,
    *,
    policies: Mapping[str, str],
    tokenizer: str,
    profile: Profile,
    fixtures_dir: str | Path,
    seed: int = 0,
    max_examples: int | None = None,
    database: Any = "default",
    examples: Iterable[dict[str, Any]] = (),
    options: RunOptions = RunOptions(),
) -> Outcome:
    started = time.monotonic()
    missing = sorted(set(prop.requires) - set(target.description.ops))
    if missing:
        return Outcome(prop, "skipped", reason=f"target has no {', '.join(missing)}")
    try:
        strategy = prop.inputs(policies)
    except Exception as exc:
        return Outcome(prop, "error", reason=f"cannot build the params strategy: {describe_exception(exc)}")
    state = _State()
    fails_on_warning = options.strict

    def body(params: dict[str, Any]) -> None:
        if state.failing:
            state.shrink_steps += 1
        else:
            state.examples += 1
            if options.on_example is not None:
                options.on_example(prop, params)
        now = time.monotonic()
        if options.heartbeat is not None and now - state.beat >= HEARTBEAT_SECONDS:
            state.beat = now
            options.heartbeat(
                f"… {prop.id}: {state.examples} examples, {state.shrink_steps} shrink steps, "
                f"{now - state.started:.0f} s"
            )
        kept = copy_json(params)
        verdict = judge(prop, target, params, policies=policies, tokenizer=tokenizer)
        raising: list[tuple[str, Finding]] = []
        for finding in verdict.findings:
            key = finding_key(prop, finding)
            if options.on_finding is not None:
                options.on_finding(key)
            if key in options.known_faults:
                hypothesis.reject()  # reported once, by the property that met it first
            if key in options.known_kinds:
                state.known_met.setdefault(key, state.examples)
                continue
            if finding.severity == "warn" and not fails_on_warning:
                state.warnings_total += key not in state.warned
                if key not in state.warned and len(state.warned) < MAX_WARNINGS:
                    state.warned[key] = (kept, finding, verdict.calls, state.examples)
                continue
            raising.append((key, finding))
        if raising:
            key, finding = raising[0]
            if key == "target-timeout" and not state.failing:
                _shorten_timeout(target, state)
            state.failing = True
            state.first_seen.setdefault(key, state.examples)
            state.last[key] = (kept, finding, verdict.calls, state.first_seen[key])
            raise _error_for(key)([f for _, f in raising if _ == key])

    test: Any = given(strategy)(body)
    for params in examples:
        test = example(params)(test)
    test = profile.hypothesis_settings(max_examples=max_examples, database=database)(test)
    set_database_key(body, f"ctxmodel:{target.description.name}:{prop.id}")
    set_seed(test, property_seed(seed, prop.id))

    error: BaseException | None = None
    try:
        with with_reporter(lambda _: None), without_local_constants(), steering(Phase.target in profile.phases), \
                warnings.catch_warnings():
            # Hypothesis warns when its printout of a failing example's arguments grows past its
            # limit (a 1 MB count input). The gate never prints that repr: it renders the fixture.
            warnings.filterwarnings("ignore", message="Generating overly large repr", category=HypothesisWarning)
            test()
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the kinds, Flaky, health checks, bugs in a strategy
        error = exc
    seconds = time.monotonic() - started
    if state.saved_timeout is not None:
        target.timeout = state.saved_timeout  # type: ignore[attr-defined]
    warned = tuple(
        _write(Kind(key, finding, params, calls, first), prop, target, policies, tokenizer, seed, fixtures_dir)
        for key, (params, finding, calls, first) in state.warned.items()
    )
    if error is None or not state.last:
        if error is not None and not _only_rejections(error):
            return Outcome(
                prop,
                "error",
                examples=state.examples,
                reason=f"Hypothesis could not run this property: {describe_exception(error)}",
                seconds=seconds,
            )
        status: Status = "passed" if state.examples else "never-run"
        reason = "" if error is None else "every input hit a target fault already reported"
        return Outcome(
            prop, status, examples=state.examples, warned=warned, warnings_total=state.warnings_total,
            reason=reason, seconds=seconds, known=tuple(state.known_met),
        )
    kinds = tuple(
        _write(Kind(key, finding, params, calls, first), prop, target, policies, tokenizer, seed, fixtures_dir)
        for key, (params, finding, calls, first) in sorted(state.last.items(), key=lambda kv: kv[1][3])
    )
    if options.trim:
        def write(kind: Kind) -> Kind:
            return _write(kind, prop, target, policies, tokenizer, seed, fixtures_dir)

        kinds = tuple(_trimmed(kind, prop, target, policies, tokenizer, write) for kind in kinds)
    return Outcome(
        prop,
        "failed",
        examples=state.examples,
        shrink_steps=state.shrink_steps,
        kinds=kinds,
        warned=warned,
        warnings_total=state.warnings_total,
        seconds=seconds,
        flaky=not _is_kind_error(error),
        known=tuple(state.known_met),
    )


def _trimmed(kind: Kind, prop: Property, target: Target, policies: Mapping[str, str], tokenizer: str,
             write: Callable[[Kind], Kind]) -> Kind:
    """The kind with the messages its failure does not need dropped (``ctxmodel.trim``), its fixture
    rewritten by ``write``; the shrunk fixture is on disk already, so an interrupted trim loses
    nothing. A target fault is not trimmed: each trial of a hang would wait for the timeout."""
    if kind.key.startswith("target-") or kind.severity != "fail":
        return kind
    last: tuple[Finding, Judgement] | None = None  # the verdict of the last trial kept, which is the result

    def fails(params: dict[str, Any]) -> bool:
        nonlocal last
        verdict = judge(prop, target, params, policies=policies, tokenizer=tokenizer)
        keys = [finding_key(prop, f) for f in verdict.failures]
        if any(key.startswith("target-") for key in keys):
            raise StopTrim  # a target that hangs or dies here would cost its timeout at every trial
        same = [f for f, key in zip(verdict.failures, keys, strict=True) if key == kind.key]
        if same:
            last = same[0], verdict
        return bool(same)

    trimmed = trim_request(kind.params, fails)
    if last is None or trimmed == kind.params:
        return kind
    finding, verdict = last
    smaller = write(attrs.evolve(kind, finding=finding, params=trimmed, calls=verdict.calls, fixture=None))
    if kind.fixture is not None and smaller.fixture != kind.fixture:
        kind.fixture.unlink(missing_ok=True)
    return smaller


def _only_rejections(error: BaseException) -> bool:
    from hypothesis.errors import FailedHealthCheck, Unsatisfiable

    return isinstance(error, Unsatisfiable | FailedHealthCheck)


def _is_kind_error(error: BaseException) -> bool:
    if isinstance(error, PropertyFailed):
        return True
    if isinstance(error, BaseExceptionGroup):
        return all(_is_kind_error(e) for e in error.exceptions)
    return False


def _write(
    kind: Kind,
    prop: Property,
    target: Target,
    policies: Mapping[str, str],
    tokenizer: str,
    seed: int,
    fixtures_dir: str | Path,
) -> Kind:
    """The fixture of one kind, written atomically before anything is reported (contract §8)."""
    fixture = Fixture(
        property=prop.id,
        op=prop.op,
        params=kind.params,
        observed=exchanges_json(kind.calls),
        target={"name": target.description.name, "version": target.description.version},
        policies=dict(policies),
        tokenizer=tokenizer,
        found=found_now(seed, hypothesis.__version__),
        note="\n".join([kind.finding.message, prop.clause]),
        kind=kind.key,
        severity=kind.severity,
    )
    name = fixture_name(kind.key.replace("/", "."), kind.params)
    path = write_atomic(Path(fixtures_dir) / name, fixture.to_json())
    return attrs.evolve(kind, fixture=path)


@attrs.frozen
class GateReport:
    outcomes: tuple[Outcome, ...]
    seed: int
    profile: str
    #: Why the run stopped early, if it did (an interrupt, the deadline, ``--max-failures``).
    stopped: str = ""


def run_seed_of(seed: int | None, profile: Profile) -> int:
    """The seed a run uses: the one asked for, else 0 for a deterministic profile, else a fresh one
    (printed at the end of every run so that it can be repeated)."""
    return seed if seed is not None else (0 if profile.deterministic else random.getrandbits(32))


def run_gate(
    target: Target,
    props: Sequence[Property],
    *,
    policies: Mapping[str, str],
    profile: Profile,
    fixtures_dir: str | Path,
    seed: int | None = None,
    max_examples: int | None = None,
    database: Any = "default",
    regressions: Mapping[str, Sequence[dict[str, Any]]] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    strict: bool = False,
    max_failures: int | None = None,
    deadline: float | None = None,
    heartbeat: Callable[[str], None] | None = None,
    on_example: Callable[[Property, dict[str, Any]], None] | None = None,
    known_kinds: Collection[str] = (),
    baseline_kinds: Collection[str] = (),
) -> GateReport:
    """Every property in turn; ``regressions`` (params by property id) run first as explicit examples.
    An interrupt, the run's ``deadline`` (seconds) or ``max_failures`` failed properties end the run
    early: the rest are ``never-run``, and the report says why. ``known_kinds``: see ``RunOptions``.
    A property that failed only on ``baseline_kinds`` (searched for because their baseline fixture no
    longer reproduces) does not count towards ``max_failures``: the run would stop early and pass."""
    run_seed = run_seed_of(seed, profile)
    with _CtrlC() as ctrl_c:
        return _run_each(target, props, policies, profile, fixtures_dir, run_seed, max_examples, database,
                         regressions, on_outcome, strict, max_failures, deadline, heartbeat, on_example,
                         known_kinds, baseline_kinds, ctrl_c)


class _CtrlC:
    """Notes a Ctrl-C while the run is in progress, whoever catches the KeyboardInterrupt it raises."""

    def __init__(self) -> None:
        self.pressed = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _run_each(
    target: Target, props: Sequence[Property], policies: Mapping[str, str], profile: Profile,
    fixtures_dir: str | Path, run_seed: int, max_examples: int | None, database: Any,
    regressions: Mapping[str, Sequence[dict[str, Any]]] | None, on_outcome: Callable[[Outcome], None] | None,
    strict: bool, max_failures: int | None, deadline: float | None, heartbeat: Callable[[str], None] | None,
    on_example: Callable[[Property, dict[str, Any]], None] | None, known_kinds: Collection[str],
    baseline_kinds: Collection[str], ctrl_c: _CtrlC,
) -> GateReport:
    outcomes: list[Outcome] = []
    known: set[str] = set()
    started = time.monotonic()
    stopped = ""
    for prop in props:
        stopped = (
            stopped or past_deadline(started, deadline) or too_many_failures(outcomes, max_failures, baseline_kinds)
        )
        if stopped:
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            continue
        try:
            outcome = run_property(
                prop,
                target,
                policies=policies,
                tokenizer=target.description.tokenizer,
                profile=profile,
                fixtures_dir=fixtures_dir,
                seed=run_seed,
                max_examples=max_examples,
                database=database,
                examples=(regressions or {}).get(prop.id, ()),
                options=RunOptions(
                    strict=strict, known_faults=frozenset(known), heartbeat=heartbeat, on_example=on_example,
                    known_kinds=frozenset(known_kinds),
                ),
            )
        except KeyboardInterrupt:
            stopped = "interrupted"
            outcomes.append(Outcome(prop, "never-run", reason=stopped))
            continue
        if ctrl_c.pressed:
            # The interrupt reached code that swallowed it (a strategy, Hypothesis, the target): the
            # run stops all the same, and a property it broke did not run.
            stopped = "interrupted"
            if outcome.status == "error":
                outcome = Outcome(prop, "never-run", reason=stopped)
        known.update(target_faults(outcome))
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return GateReport(tuple(outcomes), run_seed, profile.name, stopped)


def past_deadline(started: float, deadline: float | None) -> str:
    """Why no further property starts, when the run's deadline (seconds from ``started``) is over."""
    if deadline is not None and time.monotonic() - started >= deadline:
        return f"the run's deadline of {deadline:g} s passed"
    return ""


def too_many_failures(
    outcomes: Iterable[Outcome], max_failures: int | None, baseline_kinds: Collection[str] = ()
) -> str:
    """Why no further property starts, when the properties before it failed ``max_failures`` times
    (a property failing only on ``baseline_kinds`` not counted: see ``run_gate``)."""
    failed = sum(o.status == "failed" and any(k.key not in baseline_kinds for k in o.kinds) for o in outcomes)
    if max_failures is not None and failed >= max_failures:
        return f"{max_failures} failed propert{'y' if max_failures == 1 else 'ies'} (--max-failures)"
    return ""


def target_faults(outcome: Outcome) -> set[str]:
    """The target-fault kinds an outcome reports, which no later property of the run reports again."""
    return {k.key for k in outcome.kinds if k.key.startswith("target-")}


def exit_code(outcomes: Iterable[Outcome]) -> int:
    """Contract §9: 1 when a property failed (its fixtures are written); 2 when a property could not
    run at all (a harness or strategy problem, no fixture); else 0. Warnings fail only a strict run,
    where they are failures already."""
    statuses = {o.status for o in outcomes}
    if "failed" in statuses:
        return exitcodes.FAILED
    if "error" in statuses:
        return exitcodes.USAGE
    return exitcodes.OK
