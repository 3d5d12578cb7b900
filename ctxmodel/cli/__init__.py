"""The ``ctxmodel`` command: a click group whose commands live one family per module here.

Each module of this package defines ``COMMANDS`` (a list of click commands). A command's module is
imported only when that command runs (``validate`` on a 1.8 MB file spent most of its
time importing the gate, Hypothesis and the tokenizer it never used): :data:`COMMAND_MODULES` names
the module of every command, and ``tests/integration/test_cli_lazy.py`` checks it against what the modules
define. A command missing from the table is still found, by importing every module (slower, never
wrong), so adding a command family works before the table is updated. ``ctxmodel --help`` imports
them all, for their one-line help.

Errors a user can cause are printed as one line (``ctxmodel: FILE: messages.3.content.1: ...``)
with the exit codes of contract §9.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any

import click

from ctxmodel import exitcodes
from ctxmodel.errors import CtxmodelError, TargetError

__all__ = ["COMMAND_MODULES", "cli", "main"]

#: Command name -> the module of this package that defines it (in its ``COMMANDS``).
COMMAND_MODULES: dict[str, str] = {
    "check": "gate",
    "count": "counting",
    "fuzz": "fuzz",
    "init-target": "kit",
    "normalize": "history",
    "promote": "gate",
    "properties": "gate",
    "recover": "recovery",
    "repair": "history",
    "replay": "gate",
    "show": "history",
    "target-kit": "kit",
    "validate": "history",
}


def _module_names() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def _commands_of(module_name: str) -> dict[str, click.Command]:
    module = importlib.import_module(f"{__name__}.{module_name}")
    return {command.name: command for command in getattr(module, "COMMANDS", ()) if command.name}


class _LazyGroup(click.Group):
    """A group that imports a command's module when the command is looked up, not before."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(COMMAND_MODULES)
        for module_name in _module_names():
            if module_name not in COMMAND_MODULES.values():
                names.update(_commands_of(module_name))  # a family not in the table yet
        return sorted(names | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is not None:
            return command
        module_name = COMMAND_MODULES.get(cmd_name)
        found = _commands_of(module_name) if module_name is not None else {}
        if cmd_name not in found:
            found = {}
            for name in _module_names():  # not in the table (or moved): look everywhere
                found.update(_commands_of(name))
        for name, cmd in found.items():
            self.commands.setdefault(name, cmd)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxmodel")
def cli() -> None:
    """Verify and fuzz the code that manages an LLM agent's conversation history."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: click for parsing, our own one-line errors for the rest."""
    try:
        return cli.main(args=argv, prog_name="ctxmodel", standalone_mode=True)
    except CtxmodelError as exc:
        click.echo(f"ctxmodel: {exc}", err=True)
        sys.exit(exitcodes.TARGET if isinstance(exc, TargetError) else exitcodes.USAGE)
