"""``ctxmodel check``, ``replay`` and ``promote``: the gate users put in CI (contract §8, §9).

Exit codes are the contract's: 0 every property held (or every fixture passes now, which makes
``git bisect run ctxmodel replay FIXTURE --target …`` work), 1 a property failed / a fixture
reproduces, 2 usage or a bad fixture, 3 the target could not be started or broke the protocol
before any property ran. Errors are one line; the target is always closed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError, UsageError
from ctxmodel.profiles import PROFILES, default_profile, get_profile
from ctxmodel.targets.base import OPS

__all__ = ["COMMANDS", "check", "parse_policies", "promote_cmd", "replay_cmd", "split_csv"]


def _die(exc: CtxmodelError) -> NoReturn:
    click.echo(f"ctxmodel: {exc}", err=True)
    sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)


def parse_policies(pairs: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--policy {pair!r}: expected KEY=VALUE, e.g. orphans=to_text")
        out[key.strip()] = value.strip()
    return out


def split_csv(values: Iterable[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


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
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds per request (exec targets)")
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
) -> None:
    """Run the property suites against a target; write a fixture for every failure."""
    from ctxmodel import gate
    from ctxmodel.fixtures import examples_by_property
    from ctxmodel.policies import resolve
    from ctxmodel.properties.catalogue import select
    from ctxmodel.targets.spec import open_target, parse_spec

    try:
        spec = parse_spec(target_spec)
        overrides = parse_policies(policy_pairs)
        chosen_profile = get_profile(profile or default_profile())
        op_list = split_csv(ops)
        unknown = [op for op in op_list if op not in OPS]
        if unknown:
            raise UsageError(f"--ops {','.join(unknown)}: expected some of {', '.join(OPS)}")
        props = select(split_csv(property_ids), op_list)
        if not props:
            raise UsageError("no property matches --property/--ops")
        regressions = examples_by_property(regressions_dir)
        target = open_target(spec, timeout=timeout)
    except CtxmodelError as exc:
        _die(exc)
    try:
        try:
            policies = resolve(target.description.policies, overrides)
        except CtxmodelError as exc:
            _die(exc)
        desc = target.description
        click.echo(
            f"ctxmodel check: {desc.name} {desc.version} ({spec}); tokenizer {desc.tokenizer}; "
            f"profile {chosen_profile.name}; {len(props)} properties"
        )
        click.echo("policies: " + ", ".join(f"{k}={v}" for k, v in sorted(policies.items())))

        def progress(outcome: gate.Outcome) -> None:
            if outcome.status == "failed":
                click.echo("")
                click.echo(gate.format_failure(outcome, str(spec)))
                click.echo("")
            elif outcome.status == "error":
                click.echo(f"ERROR {outcome.prop.id}: {outcome.reason}")
            else:
                click.echo(
                    f"  {outcome.prop.id}: {gate.status_word(outcome)} ({outcome.examples} examples, "
                    f"{outcome.seconds:.1f} s)"
                )

        report = gate.run_gate(
            target,
            props,
            policies=policies,
            profile=chosen_profile,
            fixtures_dir=fixtures_dir,
            target_spec=str(spec),
            seed=seed,
            max_examples=max_examples,
            regressions=regressions,
            on_outcome=progress,
        )
    finally:
        target.close()
    warnings = gate.format_warnings(report.outcomes)
    if warnings:
        click.echo("")
        click.echo(warnings)
    click.echo("")
    click.echo(gate.format_summary(report.outcomes))
    click.echo(f"seed {report.seed} (rerun with --seed {report.seed} --profile {report.profile})")
    if junit:
        Path(junit).parent.mkdir(parents=True, exist_ok=True)
        Path(junit).write_text(gate.junit_xml(report.outcomes, target_spec=str(spec)), encoding="utf-8")
    sys.exit(gate.exit_code(report.outcomes))


@click.command("replay")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--target", "target_spec", default="reference", show_default=True, help="the target to replay against")
@click.option("--policy", "policy_pairs", multiple=True, help="override the fixture's policies: KEY=VALUE")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds per request (exec targets)")
def replay_cmd(paths: Sequence[str], target_spec: str, policy_pairs: Sequence[str], timeout: float) -> None:
    """Replay fixtures by value (default: regressions/); exit 1 when any still reproduces."""
    from ctxmodel.fixtures import expand_paths, load_fixture, replay
    from ctxmodel.gate import render_params
    from ctxmodel.properties.catalogue import get
    from ctxmodel.targets.spec import open_target, parse_spec

    try:
        spec = parse_spec(target_spec)
        overrides = parse_policies(policy_pairs)
        files = expand_paths(list(paths))
        fixtures = [(file, load_fixture(file)) for file in files]
        props = {}
        for file, fixture in fixtures:
            try:
                props[fixture.property] = get(fixture.property)
            except KeyError:
                raise UsageError(f"{file}: property: unknown property {fixture.property!r}") from None
        target = open_target(spec, timeout=timeout)
    except CtxmodelError as exc:
        _die(exc)
    reproduced = 0
    try:
        for file, fixture in fixtures:
            prop = props[fixture.property]
            missing = sorted(set(prop.requires) - set(target.description.ops))
            if missing:
                click.echo(f"skipped  {file}: target has no {', '.join(missing)}")
                continue
            try:
                verdict = replay(fixture, target, policies=overrides, source=str(file))
            except CtxmodelError as exc:
                _die(exc)
            if verdict.failed:
                reproduced += 1
                click.echo(f"REPRODUCES {file} ({prop.id}, {prop.clause})")
                for finding in verdict.failures:
                    click.echo(f"  found:    {finding.message}")
                    if finding.expected:
                        click.echo(f"  required: {finding.expected}")
                click.echo("  input:")
                click.echo(render_params(fixture.params))
            else:
                click.echo(f"passes   {file} ({prop.id})")
    finally:
        target.close()
    click.echo(f"{len(fixtures)} fixture(s), {reproduced} reproduce(s)")
    sys.exit(exitcodes.FAILED if reproduced else exitcodes.OK)


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


COMMANDS = [check, replay_cmd, promote_cmd]
