"""The command line imports only what the command it runs needs.

``ctxmodel.cli.COMMAND_MODULES`` says which module defines each command, so that ``validate``
imports the history commands and not the gate, Hypothesis or the tokenizer. It must match what the
modules define; a command left out of it is still found (by importing every module).
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import ctxmodel.cli as cli_pkg
from ctxmodel.cli import COMMAND_MODULES, cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "clean-session.json"


def _defined() -> dict[str, str]:
    out: dict[str, str] = {}
    for info in pkgutil.iter_modules(cli_pkg.__path__):
        module = importlib.import_module(f"ctxmodel.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            assert command.name not in out, f"{command.name} defined twice"
            out[command.name] = info.name
    return out


def test_the_table_names_every_command_and_its_module() -> None:
    assert _defined() == COMMAND_MODULES


def test_every_command_is_listed_and_resolves() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMAND_MODULES)
    for name in COMMAND_MODULES:
        assert cli.get_command(ctx, name) is not None
    assert cli.get_command(ctx, "no-such-command") is None


def test_a_command_missing_from_the_table_is_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(COMMAND_MODULES, "count")
    monkeypatch.setattr(cli, "commands", {})
    ctx = click.Context(cli)
    assert "count" in cli.list_commands(ctx)
    command = cli.get_command(ctx, "count")
    assert command is not None and command.name == "count"


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMAND_MODULES:
        assert name in result.output


def _modules_loaded_by(*args: str) -> set[str]:
    code = (
        "import sys\n"
        "from ctxmodel.cli import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stderr.split())


@pytest.mark.parametrize("command", ["validate", "show", "normalize"])
def test_history_commands_load_no_gate_no_hypothesis_no_tokenizer(command: str) -> None:
    loaded = _modules_loaded_by(command, str(EXAMPLE))
    assert "ctxmodel.cli.history" in loaded
    heavy = {"hypothesis", "tiktoken", "regex", "ctxmodel.gate", "ctxmodel.cli.gate", "ctxmodel.tokens.counter"}
    assert not heavy & loaded, heavy & loaded


def test_count_loads_the_tokenizer_but_not_the_gate() -> None:
    loaded = _modules_loaded_by("count", str(EXAMPLE))
    assert "tiktoken" in loaded and "ctxmodel.tokens.counter" in loaded
    assert not {"hypothesis", "ctxmodel.gate", "ctxmodel.cli.gate"} & loaded


def test_the_repair_orphans_choices_match_the_repair_module() -> None:
    from ctxmodel.cli.history import REPAIR_ORPHANS
    from ctxmodel.repair import ORPHANS

    assert REPAIR_ORPHANS == ORPHANS
