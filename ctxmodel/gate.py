"""One property against a target under Hypothesis, and the judging of one exchange (contract §7, §8).

A run of many properties is ``ctxmodel.engine``'s; this module is its unit. One Hypothesis test per
property, built at run time: ``@given(prop.inputs(policies))``, a body that makes the property's one
primary call through a fresh ``TargetProbe`` and hands the exchange to the
property's check. Every finding has a kind (the property and the finding's code; a target fault is a
kind of its own, whichever property met it); each kind raises its own exception type, so Hypothesis
keeps the kinds apart: each is shrunk on its own (a shrink never ends on another kind) and written as
its own fixture, atomically, before anything is reported.

Every runner (``ctxmodel check``, the pytest plugin, ``ctxmodel replay``, the fuzz agent loop) judges
through ``judge`` or ``judge_exchange``, so a property means the same thing wherever it runs.
Rendering the outcomes is ``ctxmodel.report``'s job.
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import hypothesis
from hypothesis import Phase, given
from hypothesis.errors import HypothesisException, HypothesisWarning, UnsatisfiedAssumption
from hypothesis.reporting import with_reporter

from ctxmodel.codec import copy_json
from ctxmodel.errors import CtxmodelError, describe_exception
from ctxmodel.events import Emitter, ExampleDrawn, FixtureWritten, Heartbeat, KindMet, WarningMet
from ctxmodel.fixtures import Fixture, FixtureError, write_failure
from ctxmodel.hypothesis_hooks import (
    generating,
    search_on_after_a_failure,
    set_database_key,
    set_seed,
    stop_shrinking,
    without_local_constants,
)
from ctxmodel.minimize import StopMinimizing, minimize_request
from ctxmodel.policies import resolve as resolve_policies
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property, Rebudget, TargetCount, declared_ops
from ctxmodel.properties.json_reading import Malformed
from ctxmodel.properties.probe import TargetProbe
from ctxmodel.results import Kind, Outcome, Status, finding_key
from ctxmodel.runs import RunConfig, RunOptions
from ctxmodel.strategies.labels import steering
from ctxmodel.strategies.stored import within
from ctxmodel.targets.base import Target, TargetFailure

__all__ = [
    "Judgement",
    "RunOptions",
    "judge",
    "judge_exchange",
    "judge_primary",
    "property_seed",
    "raised_finding",
    "replay",
    "run_property",
]

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
    except HypothesisException:
        raise
    except Exception as exc:
        return (raised_finding(exc, exchange.op),)


def raised_finding(exc: Exception, op: str) -> Finding:
    """The finding a check that raised makes (every runner reads a raised check through here): a
    target fault's own kind, an unreadable reply, or a reply the check could not judge."""
    if isinstance(exc, TargetFailure):
        return fault_finding(exc, op)
    if isinstance(exc, Malformed | CtxmodelError):
        return _unusable(exc)
    return Finding.fail(
        f"the check could not judge the target's reply: {describe_exception(exc)}",
        "a reply of contract §7's shape",
        code="unjudgeable",
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
    #: True while the regression fixtures are judged, before the search: a call then is an example.
    explicit: bool = False
    #: The last input each kind failed on: Hypothesis replays each kind's minimal example last.
    last: dict[str, tuple[dict[str, Any], Finding, tuple[Any, ...], int]] = attrs.field(factory=dict)
    warned: dict[str, tuple[dict[str, Any], Finding, tuple[Any, ...], int]] = attrs.field(factory=dict)
    warnings_total: int = 0
    #: Known kinds met, with the example they were first met at.
    known_met: dict[str, int] = attrs.field(factory=dict)
    #: Each kind as first met (input, finding, calls, example) and its unshrunk fixture, on disk until
    #: its final one replaces it.
    early: dict[str, Path | None] = attrs.field(factory=dict)
    first: dict[str, tuple[dict[str, Any], Finding, tuple[Any, ...], int]] = attrs.field(factory=dict)
    #: Generated examples rejected for a known target fault, and the faults they met.
    rejected: int = 0
    faults_met: set[str] = attrs.field(factory=set)
    started: float = attrs.field(factory=time.monotonic)
    beat: float = attrs.field(factory=time.monotonic)
    saved_timeout: float | None = None
    #: Shrink steps that ended in the target's timeout (``TIMEOUT_SHRINK_STEPS``).
    timed_out_shrinks: int = 0


#: The kind of a request the target did not answer in time (``fault_finding``'s code for a timeout).
TIMEOUT_KIND = "target-timeout"

#: Shrink steps of a property that may end in the target's timeout before its shrink stops with the
#: smallest inputs reached. Each costs the whole timeout and a restart; the steps that answer are
#: cheap and not counted. Eight keeps most of a hang's shrink (its first steps drop the most) and
#: bounds it at eight timeouts, where Hypothesis's own limit is five minutes.
TIMEOUT_SHRINK_STEPS = 8


def _shrink_timeout(target: Target, state: _State) -> None:
    """While a timeout is being shrunk, each request waits the run's timeout plus what a restart of
    the killed target costs (measured at its start): a shrink judged under a shorter wait, or one
    that counts the restart against the input, ends at an input that answers in milliseconds."""
    timeout = getattr(target, "timeout", None)
    if isinstance(timeout, int | float) and state.saved_timeout is None:
        state.saved_timeout = float(timeout)
        allowance = getattr(target, "startup_seconds", 0.0)
        extra = allowance if isinstance(allowance, int | float) else 0.0
        target.timeout = float(timeout) + extra  # type: ignore[attr-defined]


def _restore_timeout(target: Target, state: _State) -> None:
    if state.saved_timeout is not None:
        target.timeout = state.saved_timeout  # type: ignore[attr-defined]
        state.saved_timeout = None


def _timeout_reproduced(
    kinds: Sequence[Kind], state: _State, judge_again: Callable[[dict[str, Any]], bool]
) -> list[Kind]:
    """A shrunk timeout is kept only if it times out again under the run's own timeout; otherwise
    the first input that timed out is the fixture (a finding, not an input that answers at once)."""
    out = []
    for kind in kinds:
        first = state.first.get(kind.key)
        if kind.key == TIMEOUT_KIND and first is not None and first[0] != kind.params and \
                not judge_again(kind.params):
            params, finding, calls, example = first
            kind = Kind(kind.key, finding, params, calls, example)
        out.append(kind)
    return out


def property_seed(run_seed: int, prop_id: str) -> int:
    """Each property its own stream, all derived from the one seed a run prints."""
    return (run_seed * 1_000_003 + zlib.crc32(prop_id.encode())) % (2**32)


class Cut(KeyboardInterrupt):
    """Ends a property between two test calls. A ``KeyboardInterrupt`` because Hypothesis lets
    exactly that through untouched: any other exception would be taken for a failure and shrunk."""


def run_property(prop: Property, target: Target, config: RunConfig, options: RunOptions | None = None) -> Outcome:
    """One property's run against ``target``, as ``config`` asks (its profile, seed, budget,
    database, fixtures directory, policies, and the promoted regressions of this property, judged
    first), treating what it finds as ``options`` say."""
    options = options if options is not None else RunOptions()
    policies = config.policies
    tokenizer = config.tokenizer or target.description.tokenizer
    profile = config.profile
    fixtures_dir = config.fixtures_dir
    seed = config.run_seed()
    max_examples = config.max_examples
    database = config.database
    examples = config.regressions.get(prop.id, ())
    started = time.monotonic()
    missing = sorted(set(prop.requires) - set(target.description.ops))
    if missing:
        return Outcome(prop, "skipped", reason=f"target has no {', '.join(missing)}")
    dialect = policies.get("dialect", "anthropic")
    if prop.dialects and dialect not in prop.dialects:
        return Outcome(prop, "skipped", reason=f"judges {', '.join(sorted(prop.dialects))} targets, not {dialect}")
    try:
        strategy = prop.inputs(policies)
    except Exception as exc:
        return Outcome(prop, "error", reason=f"cannot build the params strategy: {describe_exception(exc)}")
    state = _State()
    fails_on_warning = options.strict
    emit = options.emit
    examples_wanted = emit.wants(ExampleDrawn)
    beats_wanted = emit.wants(Heartbeat)

    def body(params: dict[str, Any]) -> None:
        if options.stop_at is not None and time.monotonic() >= options.stop_at:
            raise Cut("the run's deadline passed")
        if options.stop_search is not None and not state.failing and options.stop_search():
            raise Cut("stopped")
        shrinking = state.failing and not generating() and not state.explicit
        if shrinking:
            state.shrink_steps += 1
        else:
            state.examples += 1
            if examples_wanted:
                emit(ExampleDrawn(prop, copy_json(params)))
        now = time.monotonic()
        if beats_wanted and now - state.beat >= HEARTBEAT_SECONDS:
            state.beat = now
            emit(Heartbeat(prop.id, f"… {prop.id}: {state.examples} examples, {state.shrink_steps} shrink steps, "
                                    f"{now - state.started:.0f} s"))
        kept = copy_json(params)
        verdict = judge(prop, target, params, policies=policies, tokenizer=tokenizer)
        if shrinking and any(f.code == TIMEOUT_KIND for f in verdict.findings):
            state.timed_out_shrinks += 1
            if state.timed_out_shrinks >= TIMEOUT_SHRINK_STEPS:
                stop_shrinking()
        raising: list[tuple[str, Finding]] = []
        for finding in verdict.findings:
            key = finding_key(prop, finding)
            if options.seen is not None:
                options.seen(key)
            if key in options.known_faults:
                if not shrinking:
                    state.rejected += 1
                    state.faults_met.add(key)
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
            if key == TIMEOUT_KIND and not state.failing:
                _shrink_timeout(target, state)
            state.failing = True
            if key not in state.first:
                emit(KindMet(prop, key, state.examples))
                state.first[key] = (kept, finding, verdict.calls, state.examples)
                # On disk at once, unshrunk: a run killed while shrinking it still leaves it.
                state.early[key] = write_kind(Kind(key, finding, kept, verdict.calls, state.examples), prop, target,
                                          policies, tokenizer, seed, fixtures_dir).fixture
            state.last[key] = (kept, finding, verdict.calls, state.first[key][3])
            raise _error_for(key)([f for _, f in raising if _ == key])

    test: Any = given(strategy)(body)
    regressions = [copy_json(params) for params in examples]
    chosen = profile.hypothesis_settings(max_examples=max_examples, database=database)
    test = chosen(test)
    wanted = options.enough

    def enough() -> bool:
        stop = options.stop_search
        return (wanted is not None and wanted(frozenset(state.first))) or (stop is not None and stop())

    set_database_key(body, f"ctxmodel:{target.description.name}:{prop.id}")
    set_seed(test, property_seed(seed, prop.id))

    error: BaseException | None = None
    try:
        with with_reporter(lambda _: None), without_local_constants(), steering(Phase.target in profile.phases), \
                search_on_after_a_failure(chosen.max_examples, enough), warnings.catch_warnings():
            # Hypothesis warns when its printout of a failing example's arguments grows past its
            # limit (a 1 MB count input). The gate never prints that repr: it renders the fixture.
            warnings.filterwarnings("ignore", message="Generating overly large repr", category=HypothesisWarning)
            # The regression fixtures first, each judged as it stands (it is minimal already), then the
            # search: a fixture that still fails is one kind met, not the end of the property's run,
            # which is what Hypothesis makes of a failing explicit example.
            state.explicit = True
            for params in regressions:
                try:
                    body(params)
                except (UnsatisfiedAssumption, PropertyFailed):
                    continue  # rejected, or one kind met (kept in state): the next fixture
            state.explicit = False
            if set(profile.phases) - {Phase.explicit}:  # the replay profile judges the fixtures alone
                test()
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, the deadline: keep what was found
        cut = str(exc) if isinstance(exc, Cut) else "interrupted"
        return _cut_short(prop, state, cut, time.monotonic() - started, target,
                          lambda kind: write_kind(kind, prop, target, policies, tokenizer, seed, fixtures_dir), emit)
    except Exception as exc:  # the kinds, Flaky, health checks, bugs in a strategy
        error = exc
    seconds = time.monotonic() - started
    _restore_timeout(target, state)

    def write(kind: Kind) -> Kind:
        written = write_kind(kind, prop, target, policies, tokenizer, seed, fixtures_dir)
        assert written.fixture is not None
        emit(FixtureWritten(prop, written.key, written.fixture))
        return written

    warned = tuple(
        write(Kind(key, finding, params, calls, first)) for key, (params, finding, calls, first) in state.warned.items()
    )
    for kind in warned:
        emit(WarningMet(prop, kind))
    if not state.last:
        if error is not None and not _only_rejections(error):
            return Outcome(
                prop,
                "error",
                examples=state.examples,
                reason=f"Hypothesis could not run this property: {describe_exception(error)}",
                seconds=seconds,
            )
        status: Status = "passed" if state.examples else "never-run"
        reason = ""
        if state.rejected and state.rejected >= state.examples:
            status = "not-judged"
            reason = f"every input ({state.rejected}) met {', '.join(sorted(state.faults_met))}, reported before"
        elif state.rejected:
            reason = f"{state.rejected} of {state.examples} inputs met {', '.join(sorted(state.faults_met))}"
        return Outcome(
            prop, status, examples=state.examples, warned=warned, warnings_total=state.warnings_total,
            reason=reason, seconds=seconds, known=tuple(state.known_met), rejected=state.rejected,
        )
    def times_out(params: dict[str, Any]) -> bool:
        again = judge(prop, target, copy_json(params), policies=policies, tokenizer=tokenizer)
        return any(finding_key(prop, f) == TIMEOUT_KIND for f in again.failures)

    met = [Kind(key, finding, params, calls, first)
           for key, (params, finding, calls, first) in sorted(state.last.items(), key=lambda kv: kv[1][3])]
    kinds = tuple(write(kind) for kind in _timeout_reproduced(met, state, times_out))
    _drop_early(state, kinds)
    if options.minimize:
        kinds = tuple(_minimized(kind, prop, target, policies, tokenizer, write) for kind in kinds)
    return Outcome(
        prop,
        "failed",
        examples=state.examples,
        shrink_steps=state.shrink_steps,
        kinds=kinds,
        warned=warned,
        warnings_total=state.warnings_total,
        seconds=seconds,
        flaky=error is not None and not _is_kind_error(error),
        known=tuple(state.known_met),
        rejected=state.rejected,
    )


def _drop_early(state: _State, kinds: Iterable[Kind]) -> None:
    """The unshrunk fixtures written as each kind was met, now that its final one is on disk."""
    final = {k.fixture for k in kinds}
    for path in state.early.values():
        if path is not None and path not in final:
            path.unlink(missing_ok=True)
    state.early.clear()


def _cut_short(prop: Property, state: _State, cut: str, seconds: float, target: Target,
               write: Callable[[Kind], Kind], emit: Emitter) -> Outcome:
    """A property stopped mid-run: every kind met so far written as it stands (the smallest input
    the shrink reached), the examples it judged counted, and why it stopped."""
    _restore_timeout(target, state)
    kinds = []
    for key, (params, finding, calls, first) in sorted(state.last.items(), key=lambda kv: kv[1][3]):
        try:
            kind = write(Kind(key, finding, params, calls, first))
        except OSError:  # the disk refused it: the early fixture stays
            kind = Kind(key, finding, params, calls, first, fixture=state.early.get(key))
        if kind.fixture is not None:
            emit(FixtureWritten(prop, kind.key, kind.fixture))
        kinds.append(kind)
    _drop_early(state, kinds)
    status: Status = "failed" if kinds else "cut" if state.examples else "never-run"
    reason = f"{cut} after {state.examples} examples" if state.examples else cut
    return Outcome(prop, status, examples=state.examples, shrink_steps=state.shrink_steps, kinds=tuple(kinds),
                   warnings_total=state.warnings_total, reason=reason, seconds=seconds,
                   known=tuple(state.known_met), rejected=state.rejected, cut=reason)


def _minimized(kind: Kind, prop: Property, target: Target, policies: Mapping[str, str], tokenizer: str,
               write: Callable[[Kind], Kind]) -> Kind:
    """The kind with the messages its failure does not need dropped (``ctxmodel.minimize``), its fixture
    rewritten by ``write``; the shrunk fixture is on disk already, so an interrupted minimizer loses
    nothing. A target fault is not minimized: each trial of a hang would wait for the timeout."""
    if kind.key.startswith("target-") or kind.severity != "fail":
        return kind
    last: tuple[Finding, Judgement] | None = None  # the verdict of the last trial kept, which is the result

    inputs = policies.get("inputs", "any")

    def fails(params: dict[str, Any]) -> bool:
        nonlocal last
        if not within(params, inputs):
            return False  # outside what the target declared it is given: not a smaller case of it
        verdict = judge(prop, target, params, policies=policies, tokenizer=tokenizer)
        keys = [finding_key(prop, f) for f in verdict.failures]
        if any(key.startswith("target-") for key in keys):
            raise StopMinimizing  # a target that hangs or dies here would cost its timeout at every trial
        same = [f for f, key in zip(verdict.failures, keys, strict=True) if key == kind.key]
        if same:
            last = same[0], verdict
        return bool(same)

    smallest = minimize_request(kind.params, fails, rebudget=_rebudget_for(prop.op, target, policies, tokenizer))
    if last is None or smallest == kind.params:
        return kind
    finding, verdict = last
    smaller = write(attrs.evolve(kind, finding=finding, params=smallest, calls=verdict.calls, fixture=None))
    if kind.fixture is not None and smaller.fixture != kind.fixture:
        kind.fixture.unlink(missing_ok=True)
    return smaller


def _rebudget_for(op: str, target: Target, policies: Mapping[str, str], tokenizer: str) -> Rebudget | None:
    """The budget rule the op declares (``declare_op(rebudget=...)``), made for this kind, with every
    way it can fail to move the budget (no count, a count the target would not give) read as "judge
    the drop as it stands"."""
    declared = declared_ops().get(op)
    if declared is None or declared.rebudget is None:
        return None
    rule = declared.rebudget(_target_count(target), policies, tokenizer)

    def rebudget(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return rule(before, after)
        except (CtxmodelError, TargetFailure, ValueError, TypeError, KeyError):
            return None

    return rebudget


def _target_count(target: Target) -> TargetCount | None:
    """The target's own ``count``, or None for a target without one."""
    if "count" not in target.description.ops:
        return None

    def count(messages: list[dict[str, Any]], prompt: str | None) -> int:
        ask: dict[str, Any] = {"messages": copy_json(messages)}
        if prompt:
            ask["systemPrompt"] = prompt
        tokens = target.call("count", ask).get("tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            raise TargetFailure("error-reply", f"count returned {tokens!r} tokens: expected an integer")
        return tokens

    return count


def _only_rejections(error: BaseException) -> bool:
    from hypothesis.errors import FailedHealthCheck, Unsatisfiable

    return isinstance(error, Unsatisfiable | FailedHealthCheck)


def _is_kind_error(error: BaseException) -> bool:
    if isinstance(error, PropertyFailed):
        return True
    if isinstance(error, BaseExceptionGroup):
        return all(_is_kind_error(e) for e in error.exceptions)
    return False


def write_kind(
    kind: Kind,
    prop: Property,
    target: Target,
    policies: Mapping[str, str],
    tokenizer: str,
    seed: int,
    fixtures_dir: str | Path,
    notes: Sequence[str] = (),
) -> Kind:
    """The fixture of one kind, written atomically before anything is reported (contract §8);
    ``notes`` are said after the finding and the clause (the agent loop's step sequence)."""
    path = write_failure(
        fixtures_dir, property_id=prop.id, op=prop.op, kind=kind.key, params=kind.params, calls=kind.calls,
        target={"name": target.description.name, "version": target.description.version}, policies=policies,
        tokenizer=tokenizer, seed=seed, notes=[kind.finding.message, prop.clause, *notes], severity=kind.severity,
    )
    return attrs.evolve(kind, fixture=path)
