"""``ctxmodel fuzz``: a campaign of many workers on a shared example database, and
``ctxmodel fuzz report``: the one report of a campaign that machines joined through Redis.

Exit codes are contract §9's: 0 every property held for the whole campaign, 1 a property failed (its
fixtures are written), 2 usage or input error (or a property that could not run at all, or a
campaign that stopped before it judged one example), 3 the target could not be started; the rules
are ``ctxmodel check``'s (``ctxmodel.results.verdict_code``). A stop by Ctrl-C or SIGTERM exits the
same way, by what was found: it is how a campaign is meant to end. A machine that joined a
``--campaign`` exits by what the whole campaign holds, as its report shows.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError, UsageError

__all__ = ["COMMANDS", "fuzz"]


@click.group("fuzz", invoke_without_command=True)
@click.option(
    "--target", "target_spec", default=None, help="reference, python:pkg.mod[:obj] or exec:COMMAND [required]"
)
@click.option("--duration", default=None, help="wall-clock budget: 90s, 30m, 2h, 1h30m")
@click.option("--max-examples", type=click.IntRange(min=1), default=None, help="examples per property, all workers")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="worker processes [default: CPUs - 1]")
@click.option("--db", "database", default=None, help="example database: a directory, or redis://host:port/N")
@click.option("--fixtures", "fixtures_dir", default="ctxmodel-fixtures", show_default=True, help="where failures go")
@click.option("--report", "report_dir", default=".ctxmodel/report", show_default=True, help="report.html + report.json")
@click.option("--property", "property_ids", multiple=True, help="property id or prefix (repeatable); agent-loop too")
@click.option("--policy", "policy_pairs", multiple=True, help="override a declared policy: KEY=VALUE")
@click.option("--seed", type=int, default=None, help="campaign seed (printed at the end)")
@click.option("--timeout", type=float, default=10.0, show_default=True, help="seconds per request (exec targets)")
@click.option("--no-agent-loop", is_flag=True, help="leave out the stateful agent-loop model")
@click.option("--grace", type=float, default=10.0, show_default=True, help="seconds to finish a shrink after a stop")
@click.option("--campaign", default=None, help="join the campaign NAME kept in the --db redis://… (many machines)")
@click.pass_context
def fuzz(
    ctx: click.Context,
    target_spec: str | None,
    duration: str | None,
    max_examples: int | None,
    workers: int | None,
    database: str | None,
    fixtures_dir: str,
    report_dir: str,
    property_ids: Sequence[str],
    policy_pairs: Sequence[str],
    seed: int | None,
    timeout: float,
    no_agent_loop: bool,
    grace: float,
    campaign: str | None,
) -> None:
    """Fuzz a target for a while: live progress, a fixture per failing kind, an HTML report.

    With --db redis://… --campaign NAME, any number of machines join one campaign; `ctxmodel fuzz
    report --db redis://… --campaign NAME` renders all of it."""
    if ctx.invoked_subcommand is not None:
        return
    if target_spec is None:
        raise click.UsageError("Missing option '--target'.")
    from ctxmodel.cli.gate import parse_policies, writable
    from ctxmodel.fuzz.campaign import CampaignConfig, default_workers, run_campaign
    from ctxmodel.fuzz.database import DEFAULT_DB, is_redis

    try:
        # Said at the start: a campaign of hours whose findings, report or database cannot be kept.
        writable(Path(fixtures_dir), "--fixtures", directory=True)
        if report_dir:
            writable(Path(report_dir), "--report", directory=True)
        if database and not is_redis(database):
            writable(Path(database), "--db", directory=True)
        config = CampaignConfig(
            target_spec=target_spec,
            duration=None if duration is None else parse_duration(duration),
            max_examples=max_examples,
            workers=workers or default_workers(),
            database=database or DEFAULT_DB,
            fixtures_dir=fixtures_dir,
            report_dir=report_dir or None,
            property_ids=tuple(p.strip() for v in property_ids for p in v.split(",") if p.strip()),
            policies=parse_policies(policy_pairs),
            seed=seed,
            timeout=timeout,
            agent_loop=not no_agent_loop,
            grace=grace,
            campaign=campaign,
        )
        result = run_campaign(config, out=sys.stdout)
    except CtxmodelError as exc:
        click.echo(f"ctxmodel: {exc}", err=True)
        sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)
    sys.exit(result.exit_code)


@fuzz.command("report")
@click.option("--db", "database", required=True, help="the campaign's Redis: redis://host:port/N")
@click.option("--campaign", required=True, help="the campaign's name")
@click.option("--report", "report_dir", default=".ctxmodel/report", show_default=True, help="report.html + report.json")
@click.option("--fixtures", "fixtures_dir", default=None, help="write every kind's fixture into this directory")
@click.option("--clear", is_flag=True, help="then delete the campaign from Redis")
def report(database: str, campaign: str, report_dir: str, fixtures_dir: str | None, clear: bool) -> None:
    """Render the report of a campaign machines joined through Redis (every kind, once), and with
    --fixtures write its fixtures. Exits 1 when the campaign holds a failing kind, else 0."""
    import time

    import redis

    from ctxmodel.cli.gate import writable
    from ctxmodel.fuzz.database import check_database
    from ctxmodel.fuzz.progress import summary
    from ctxmodel.fuzz.report import write_report
    from ctxmodel.fuzz.shared_campaign import SharedCampaign, check_name, load_result

    try:
        if report_dir:
            writable(Path(report_dir), "--report", directory=True)
        if fixtures_dir:
            writable(Path(fixtures_dir), "--fixtures", directory=True)
        check_name(campaign, database)
        check_database(database)
        shared = SharedCampaign(database, campaign)
        try:
            result = load_result(shared, fixtures_dir, time.time())
            if clear:
                shared.clear()
        except redis.RedisError as exc:
            raise UsageError(f"--campaign {campaign}: {exc}") from None
    except CtxmodelError as exc:
        click.echo(f"ctxmodel: {exc}", err=True)
        sys.exit(exitcodes.USAGE)
    if report_dir:
        write_report(result, report_dir)
    click.echo(summary(result, report_dir or None), nl=False)
    sys.exit(result.exit_code)


COMMANDS = [fuzz]


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``30m``, ``2h``, ``1h30m`` -> seconds; one line naming the value when not."""
    import re

    raw = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return float(raw)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", raw)
    if not parts or "".join(n + u for n, u in parts) != raw:
        raise UsageError(f"--duration {text!r}: expected e.g. 90s, 30m, 2h or 1h30m")
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(n) * scale[u] for n, u in parts)
