"""``ctxmodel fuzz``: a campaign of many workers on a shared example database (issue 6).

Exit codes are contract §9's: 0 every property held for the whole campaign, 1 a property failed
(its fixture is written), 2 usage or input error (or a property that could not run at all), 3 the
target could not be started. A stop by Ctrl-C or SIGTERM exits the same way, by what was found.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError

__all__ = ["COMMANDS", "fuzz"]


@click.command("fuzz")
@click.option("--target", "target_spec", required=True, help="reference, python:pkg.mod[:obj] or exec:COMMAND")
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
def fuzz(
    target_spec: str,
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
) -> None:
    """Fuzz a target for a while: live progress, a fixture per failure, an HTML report."""
    from ctxmodel.cli.gate import parse_policies
    from ctxmodel.fuzz.campaign import CampaignConfig, default_workers, parse_duration, run_campaign
    from ctxmodel.fuzz.database import DEFAULT_DB

    try:
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
        )
        result = run_campaign(config, out=sys.stdout)
    except CtxmodelError as exc:
        click.echo(f"ctxmodel: {exc}", err=True)
        sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)
    sys.exit(result.exit_code)


COMMANDS = [fuzz]
