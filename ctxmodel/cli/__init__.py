"""The ``ctxmodel`` command: a click group whose commands live one family per module here.

Each module of this package defines ``COMMANDS`` (a list of click commands); they are found by
name so that adding a command family touches no other file. Errors a user can cause are printed
as one line (``ctxmodel: FILE: messages.3.content.1: ...``) with the exit codes of contract §9.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxmodel")
def cli() -> None:
    """Verify and fuzz the code that manages an LLM agent's conversation history."""


def _register() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: click for parsing, our own one-line errors for the rest."""
    try:
        return cli.main(args=argv, prog_name="ctxmodel", standalone_mode=True)
    except CtxmodelError as exc:
        click.echo(f"ctxmodel: {exc}", err=True)
        sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)
