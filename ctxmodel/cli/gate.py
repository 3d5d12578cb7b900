"""``ctxmodel check``, ``replay`` and ``promote``: the gate users put in CI (contract §8, §9).

Exit codes are the contract's: 0 every property held (or every fixture passes now, which makes
``git bisect run ctxmodel replay FIXTURE --target …`` work), 1 a property failed / a fixture
reproduces, 2 usage or a bad fixture, 3 the target could not be started or broke the protocol
before any property ran. Errors are one line; the target is always closed.
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError, UsageError
from ctxmodel.profiles import PROFILES, default_profile, get_profile
from ctxmodel.targets.base import OPS

if TYPE_CHECKING:
    from ctxmodel.baseline import Baseline

__all__ = [
    "COMMANDS",
    "check",
    "parse_policies",
    "promote_cmd",
    "properties_cmd",
    "properties_table",
    "replay_cmd",
    "split_csv",
]


def _die(exc: CtxmodelError) -> NoReturn:
    click.echo(f"ctxmodel: {exc}", err=True)
    sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)


def parse_policies(pairs: Iterable[str]) -> dict[str, str]:
    """``--policy KEY=VALUE`` pairs, each checked against contract §3/§4's policies (exit 2)."""
    from ctxmodel.policies import parse_pairs

    return parse_pairs(pairs, "--policy")


def split_csv(values: Iterable[str]) -> list[str]:
    from ctxmodel.policies import split_csv as split

    return split(values)


@click.command("check")
@click.option("--target", "target_spec", required=True, help="reference, python:pkg.mod[:obj] or exec:COMMAND")
@click.option("--ops", "ops", multiple=True, help="only properties of these ops (comma-separated, repeatable)")
@click.option("--property", "property_ids", multiple=True, help="property id or prefix (repeatable)")
@click.option("--policy", "policy_pairs", multiple=True, help="override a declared policy: KEY=VALUE")
@click.option("--max-examples", type=click.IntRange(min=1), default=None, help="examples per property")
@click.option("--seed", type=int, default=None, help="seed of the run (printed at the end of every run)")
@click.option("--profile", type=click.Choice(list(PROFILES)), default=None, help="default: ci if $CI is set, else dev")
@click.option("--junit", type=click.Path(dir_okay=False), default=None, help="write a JUnit XML report")
@click.option("--fixtures", "fixtures_dir", default="ctxmodel-fixtures", show_default=True, help="where failures go")
@click.option(
    "--regressions",
    "regressions_dir",
    default="regressions",
    show_default=True,
    help="promoted fixtures, run first as explicit examples",
)
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds per request")
@click.option("--strict", is_flag=True, help="warnings fail the run too (contract §8)")
@click.option("--max-failures", type=click.IntRange(min=1), default=None, help="stop after N failed properties")
@click.option("-x", "--exitfirst", is_flag=True, help="stop at the first failed property (--max-failures 1)")
@click.option("--deadline", type=float, default=None, help="seconds for the whole run; the rest is never run")
@click.option("--require-ops", "require_ops", multiple=True, help="exit 3 unless the target offers these ops")
@click.option(
    "--baseline",
    "baseline_dir",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="fixtures of known failures (an earlier run's): only kinds not among them fail the run; "
    "each is replayed first, then reported known (still fails), fixed, or not checked",
)
@click.option("--coverage", "show_coverage", is_flag=True,
              help="after the summary, the cells of each op's input partition every property reached")
@click.option(
    "--jobs",
    type=int,
    default=1,
    show_default=True,
    help="worker processes, each with its own target; the verdicts are those of --jobs 1",
)
def check(
    target_spec: str,
    ops: Sequence[str],
    property_ids: Sequence[str],
    policy_pairs: Sequence[str],
    max_examples: int | None,
    seed: int | None,
    profile: str | None,
    junit: str | None,
    fixtures_dir: str,
    regressions_dir: str,
    timeout: float,
    strict: bool,
    max_failures: int | None,
    exitfirst: bool,
    deadline: float | None,
    require_ops: Sequence[str],
    baseline_dir: str | None,
    show_coverage: bool,
    jobs: int,
) -> None:
    """Run the property suites against a target; write a fixture for every distinct failure.

    With --baseline DIR, a failure whose kind has a fixture in DIR is known: the run exits 0 when
    every failure is known, 1 when a kind is new, and says per kind new, known, or fixed (fixed: its
    fixture no longer reproduces and the search did not meet it)."""
    import attrs

    from ctxmodel import baseline as base
    from ctxmodel import engine, report, results
    from ctxmodel.engine import RunConfig
    from ctxmodel.events import Callback, ExampleDrawn, PropertyFinished
    from ctxmodel.fixtures import examples_by_property
    from ctxmodel.partition import Coverage, excluded_by
    from ctxmodel.policies import resolve
    from ctxmodel.properties.registry import select
    from ctxmodel.targets.spec import open_target, parse_spec

    try:
        spec = parse_spec(target_spec)
        overrides = parse_policies(policy_pairs)
        chosen_profile = get_profile(profile or default_profile())
        op_list = split_csv(ops)
        required = split_csv(require_ops)
        for option, values in (("--ops", op_list), ("--require-ops", required)):
            unknown = [op for op in values if op not in OPS]
            if unknown:
                raise UsageError(f"{option} {','.join(unknown)}: expected some of {', '.join(OPS)}")
        if jobs < 1:
            raise UsageError(f"--jobs {jobs}: expected at least 1 worker process")
        props = select(split_csv(property_ids), op_list)
        if not props:
            raise UsageError("no property matches --property/--ops")
        if not math.isfinite(timeout) or timeout <= 0:
            raise UsageError(f"--timeout {timeout}: expected a positive number of seconds")
        if deadline is not None and (not math.isfinite(deadline) or deadline < 0):
            raise UsageError(f"--deadline {deadline}: expected a number of seconds, 0 or more")
        writable(Path(fixtures_dir), "--fixtures", directory=True)
        if junit:
            writable(Path(junit), "--junit", directory=False)
        regressions = examples_by_property(regressions_dir)
        known = base.load_baseline(baseline_dir, fixtures_dir=fixtures_dir) if baseline_dir else None
        target = open_target(spec, timeout=timeout)
    except TargetError as exc:
        if junit:
            _write_junit(junit, report.junit_error(str(exc), target_spec=target_spec))
        _die(exc)
    except CtxmodelError as exc:
        _die(exc)
    outcomes: list[results.Outcome] = []
    run_seed: int | None = seed
    stopped = ""
    code = exitcodes.OK
    running = False
    cells: Coverage | None = None
    try:
        try:
            policies = resolve(target.description.policies, overrides)
            lacking = [op for op in required if op not in target.description.ops]
            if lacking:
                raise TargetError(
                    f"{spec}: the target offers no {', '.join(lacking)} (--require-ops); it offers "
                    f"{', '.join(sorted(target.description.ops)) or 'nothing'}"
                )
        except CtxmodelError as exc:
            target.close()
            if junit and isinstance(exc, TargetError):
                _write_junit(junit, report.junit_error(str(exc), target_spec=target_spec))
            _die(exc)
        cells = Coverage(excluded=excluded_by(policies))  # the summary's cells column; --coverage's table
        desc = target.description
        click.echo(
            f"ctxmodel check: {desc.name} {desc.version} ({spec}); tokenizer {desc.tokenizer}; "
            f"profile {chosen_profile.name}; {len(props)} properties"
        )
        click.echo("policies: " + ", ".join(f"{k}={v}" for k, v in sorted(policies.items())))
        running = True
        if known is not None:
            try:
                known = base.replay_baseline(known, target, props, policies=policies)
            except CtxmodelError as exc:
                _die(exc)
            click.echo(report.format_baseline_replay(known))

        def kept(event: PropertyFinished) -> None:
            outcomes.append(event.outcome)

        mark = (lambda o: base.mark(o, known)) if known is not None else None
        config = RunConfig(
            policies=policies,
            profile=chosen_profile,
            fixtures_dir=Path(fixtures_dir),
            seed=seed,
            max_examples=max_examples,
            regressions=regressions,
            strict=strict,
            max_failures=1 if exitfirst else max_failures,
            deadline=deadline,
            known_kinds=known.reproducing if known is not None else (),
            baseline_kinds=known.kinds if known is not None else (),
            jobs=jobs,
            target_spec=str(spec),
            timeout=timeout,
        )
        run_seed = config.run_seed()
        config = attrs.evolve(config, seed=run_seed)
        handlers: list[Any] = [
            Callback(kept, frozenset({PropertyFinished})),
            report.TextProgress(str(spec), click.echo, lambda line: click.echo(line, err=True), mark),
        ]
        if cells is not None:
            coverage = cells
            handlers.append(Callback(lambda e: coverage.add(e.prop, e.params), frozenset({ExampleDrawn})))
        result = engine.run(props, config, target=target, handlers=handlers)
        outcomes[:] = list(result.outcomes)
        stopped = result.stopped
        code = results.exit_code([base.mark(o, known) for o in outcomes] if known is not None else outcomes)
        if stopped.startswith("interrupted"):
            code = exitcodes.TERMINATED if "SIGTERM" in stopped else exitcodes.INTERRUPTED
    except KeyboardInterrupt:
        stopped, code = "interrupted", exitcodes.INTERRUPTED
    finally:
        target.close()
        if running:
            _finish(outcomes, props, spec=str(spec), seed=run_seed, profile=chosen_profile.name, junit=junit,
                    stopped=stopped, known=known, cells=cells.judged_cells(props) if cells is not None else None)
            if cells is not None and show_coverage:
                click.echo("")
                click.echo(cells.format(props))
    sys.exit(code)


def _finish(
    outcomes: list[Any], props: Sequence[Any], *, spec: str, seed: int | None, profile: str, junit: str | None,
    stopped: str, known: Baseline | None = None, cells: Mapping[str, tuple[int, int]] | None = None,
) -> None:
    """Warnings, the summary, the seed and the JUnit file: printed and written on every exit path,
    an interrupt included (contract §9). With a baseline, its per-kind verdicts after the summary."""
    from ctxmodel import report
    from ctxmodel.baseline import mark, verdicts
    from ctxmodel.results import Outcome, judged_nothing

    done = {o.prop.id for o in outcomes}
    rest = [Outcome(p, "never-run", reason=stopped or "not reached") for p in props if p.id not in done]
    raw = list(outcomes) + rest
    full = [mark(o, known) for o in raw] if known is not None else raw
    warnings = report.format_warnings(full)
    if warnings:
        click.echo("")
        click.echo(warnings)
    click.echo("")
    click.echo(report.format_summary(full, cells))
    if known is not None:
        click.echo("")
        click.echo(report.format_baseline(known.directory, verdicts(known, raw)))
    if stopped:
        click.echo(f"the run stopped early: {stopped}")
    if seed is not None:
        click.echo(f"seed {seed} (rerun with --seed {seed} --profile {profile})")
    if judged_nothing(full):
        click.echo("the run judged nothing: no property judged an example before it stopped (exit 2)")
    if junit:
        _write_junit(junit, report.junit_xml(full, target_spec=spec))


def _write_junit(path: str, text: str) -> None:
    """The JUnit file, or one line on stderr: a report that cannot be written must not hide the
    verdict (the exit code stays the run's)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        click.echo(f"ctxmodel: --junit {path}: cannot write it: {exc.strerror or exc}", err=True)


def writable(path: Path, option: str, *, directory: bool) -> None:
    """Say at the start, not after the run, that its findings could not be kept (exit 2)."""
    folder = (path if directory else path.parent).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # created when the first fixture is written: its parent must take it
    try:
        if not folder.is_dir():
            raise NotADirectoryError(20, "not a directory")
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ctxmodel-write-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there: {exc.strerror or exc}") from None


@click.command("replay")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--target", "target_spec", default="reference", show_default=True, help="the target to replay against")
@click.option("--policy", "policy_pairs", multiple=True, help="override the fixture's policies: KEY=VALUE")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds per request")
@click.option("--strict", is_flag=True, help="a fixture whose warning still shows counts as reproducing")
def replay_cmd(
    paths: Sequence[str], target_spec: str, policy_pairs: Sequence[str], timeout: float, strict: bool
) -> None:
    """Replay fixtures by value (default: regressions/); exit 1 when any still reproduces.

    A fixture reproduces when the kind it recorded fails again; another kind failing on its input is
    said as such (and fails the replay too). On a baseline of known failures, the closing lines list
    the kinds still there. Exit 0: none fails (each is fixed, or skipped because the target lacks its
    op); 1: some still do; 2: a fixture that cannot be used (unreadable, an unknown property or op,
    params its op cannot take: every one is named, the rest still replayed); 3: the target could not
    start."""
    from ctxmodel.fixtures import expand_paths
    from ctxmodel.gate import replay
    from ctxmodel.report import render_params
    from ctxmodel.results import finding_key
    from ctxmodel.targets.spec import open_target, parse_spec

    try:
        spec = parse_spec(target_spec)
        overrides = parse_policies(policy_pairs)
        files = expand_paths(list(paths))
        if not files:
            raise UsageError(f"{' '.join(paths) or 'regressions'}: no fixture (*.json) to replay")
        usable, invalid = _usable_fixtures(files)
        target = open_target(spec, timeout=timeout) if usable else None
    except CtxmodelError as exc:
        _die(exc)
    for file, why in invalid:
        click.echo(f"INVALID  {file}: {why}")
    reproduced = warned = skipped = other = 0
    still: list[tuple[str, Path]] = []
    try:
        for file, fixture, prop in usable:
            assert target is not None
            missing = sorted(set(prop.requires) - set(target.description.ops))
            if missing:
                click.echo(f"skipped  {file}: target has no {', '.join(missing)}")
                skipped += 1
                continue
            try:
                verdict = replay(fixture, target, policies=overrides, source=str(file))
            except CtxmodelError as exc:
                _die(exc)
            recorded = fixture.kind or prop.id
            keys = [finding_key(prop, f) for f in verdict.failures]
            same = [f for f, key in zip(verdict.failures, keys, strict=True) if not fixture.kind or key == fixture.kind]
            if same or (strict and verdict.warnings and not verdict.failures):
                reproduced += 1
                still.append((recorded, file))
                click.echo(f"REPRODUCES {file} ({recorded}, {prop.clause})")
                shown = same or list(verdict.warnings)
            elif verdict.failures:
                other += 1
                still.append((keys[0], file))
                click.echo(f"FAILS AS ANOTHER KIND {file}: recorded {recorded}; now {', '.join(dict.fromkeys(keys))}")
                shown = list(verdict.failures)
            elif verdict.warnings:
                warned += 1
                click.echo(f"WARNS    {file} ({recorded}): the warning still shows")
                shown = list(verdict.warnings)
            else:
                click.echo(f"passes   {file} ({recorded}): no longer reproduces")
                continue
            for finding in shown:
                click.echo(f"  found:    {finding.message}")
                if finding.expected:
                    click.echo(f"  required: {finding.expected}")
            click.echo("  input:")
            click.echo(render_params(fixture.params))
    finally:
        if target is not None:
            target.close()
    total = len(files)
    gone = total - reproduced - other - warned - skipped - len(invalid)
    tail = (f", {other} fail(s) as another kind" if other else "") + (f", {warned} still warn(s)" if warned else "") \
        + (f", {skipped} skipped" if skipped else "") + (f", {len(invalid)} invalid" if invalid else "")
    click.echo(f"{total} fixture(s): {reproduced} reproduce(s), {gone} no longer reproduce(s){tail}")
    if still and total > 1:
        click.echo("still there:")
        width = max(len(kind) for kind, _ in still)
        for kind, file in still:
            click.echo(f"  {kind:<{width}}  {file}")
    if invalid:
        sys.exit(exitcodes.USAGE)
    sys.exit(exitcodes.FAILED if reproduced or other else exitcodes.OK)


def _usable_fixtures(files: Sequence[Path]) -> tuple[list[tuple[Path, Any, Any]], list[tuple[Path, str]]]:
    """Each fixture with its property, or why it cannot be replayed: one bad file does not stop the
    rest of a directory from being replayed."""
    from ctxmodel.fixtures import FixtureError, load_fixture, params_problem
    from ctxmodel.properties.registry import get

    usable: list[tuple[Path, Any, Any]] = []
    invalid: list[tuple[Path, str]] = []
    for file in files:
        try:
            fixture = load_fixture(file)
        except FixtureError as exc:
            invalid.append((file, ": ".join(p for p in (exc.path, exc.message) if p)))
            continue
        if fixture.op not in OPS:
            invalid.append((file, f"op: unknown op {fixture.op!r} (expected one of {', '.join(OPS)})"))
            continue
        try:
            prop = get(fixture.property)
        except KeyError:
            invalid.append((file, f"property: unknown property {fixture.property!r}"))
            continue
        if prop.op != fixture.op:
            invalid.append((file, f"op: {fixture.op!r}, but {prop.id} is a property of {prop.op!r}"))
            continue
        problem = params_problem(fixture.op, fixture.params)
        if problem:
            invalid.append((file, f"params: {problem}"))
            continue
        usable.append((file, fixture, prop))
    return usable, invalid


@click.command("properties")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def properties_cmd(fmt: str) -> None:
    """List every property: id, op, clause, policies and summary."""
    from ctxmodel.properties.registry import all_properties

    if fmt == "markdown":
        click.echo(properties_table())
        return
    for prop in all_properties():
        policies = f"  policies: {', '.join(prop.policies)}" if prop.policies else ""
        kind = "  (a warning)" if prop.warning else ""
        click.echo(f"{prop.id}  [{prop.op}]  {prop.clause}{policies}{kind}")
        click.echo(f"    {prop.summary}")


def properties_table() -> str:
    """The catalogue as the Markdown table ``PROPERTIES.md`` carries (a test keeps the two equal)."""
    from ctxmodel.properties.registry import all_properties

    lines = ["| id | op | clause | policies | summary |", "|---|---|---|---|---|"]
    for prop in all_properties():
        summary = prop.summary.replace("|", "\\|") + (" *(a warning)*" if prop.warning else "")
        lines.append(f"| `{prop.id}` | {prop.op} | {prop.clause} | {', '.join(prop.policies) or '-'} | {summary} |")
    return "\n".join(lines)


@click.command("promote")
@click.argument("fixture", type=click.Path())
@click.option("--name", default=None, help="readable name (default: from the fixture's first finding)")
@click.option("--into", "into", default="regressions", show_default=True, help="the committed fixture corpus")
def promote_cmd(fixture: str, name: str | None, into: str) -> None:
    """Move a fixture into regressions/ as <property-id>--<name>.json."""
    from ctxmodel.fixtures import promote

    try:
        dest = promote(fixture, into=into, name=name)
    except CtxmodelError as exc:
        _die(exc)
    click.echo(str(dest))


COMMANDS = [check, replay_cmd, promote_cmd, properties_cmd]
