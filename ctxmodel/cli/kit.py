"""``ctxmodel target-kit`` and ``ctxmodel init-target``: the JavaScript target kit and a starter adapter.

The kit (``ctxmodel/targetkit/js``) is what a JavaScript or TypeScript adapter runs on: the
JSON-lines loop of contract §7, ``describe``, error replies, the input-mutation check, deterministic
ids and clock, lossless numbers. ``target-kit --path`` prints where it is installed;
``init-target --lang js`` writes a starter adapter and, by default, a copy of the kit beside it, so
the adapter does not depend on where ctxmodel is installed (commit both; re-run ``init-target
--kit-only`` to refresh the copy).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from ctxmodel.errors import UsageError
from ctxmodel.targetkit import KIT_FILES, kit_dir, kit_file

__all__ = ["COMMANDS", "init_target", "target_kit"]

_STARTER = Path(__file__).resolve().parent.parent / "targetkit" / "starter.js.txt"


@click.command("target-kit")
@click.option("--path", "show_path", is_flag=True, help="Print only the kit's folder (or, with --module, its file).")
@click.option(
    "--module",
    "flavour",
    type=click.Choice(["cjs", "esm"]),
    default=None,
    help="cjs: require(...); esm: import ... from.",
)
def target_kit(show_path: bool, flavour: str | None) -> None:
    """Where the JavaScript target kit is, and how an adapter loads it."""
    if show_path:
        click.echo(str(kit_file(flavour) if flavour else kit_dir()))
        return
    cjs, esm = kit_file("cjs"), kit_file("esm")
    click.echo(f"ctxmodel JavaScript target kit: {kit_dir()}")
    click.echo(f"  CommonJS:  const kit = require({json.dumps(str(cjs))})")
    click.echo(f"  ES module: import * as kit from {json.dumps(esm.as_uri())}")
    click.echo("A starter adapter: ctxmodel init-target --lang js --dir DIR")


def _kit_import(flavour: str, where: str) -> str:
    name = KIT_FILES[flavour]
    if flavour == "cjs":
        target = f"./{name}" if where == "copy" else str(kit_file("cjs"))
        return f'"use strict";\n\nconst kit = require({json.dumps(target)});'
    target = f"./{name}" if where == "copy" else kit_file("esm").as_uri()
    return f"import * as kit from {json.dumps(target)};"


@click.command("init-target")
@click.option(
    "--lang", type=click.Choice(["js"]), required=True, help="The adapter's language (js: JavaScript, for JS/TS code)."
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("ctxmodel-target"),
    show_default=True,
    help="Where to write the adapter.",
)
@click.option("--name", default=None, help="The target's name in describe (default: the folder's name).")
@click.option("--module", "flavour", type=click.Choice(["cjs", "esm"]), default="cjs", show_default=True)
@click.option(
    "--copy-kit/--no-copy-kit",
    default=True,
    show_default=True,
    help="Copy the kit beside the adapter (else load it from where ctxmodel is installed).",
)
@click.option("--kit-only", is_flag=True, help="Only (re)write the copy of the kit.")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
def init_target(
    lang: str, directory: Path, name: str | None, flavour: str, copy_kit: bool, kit_only: bool, force: bool
) -> None:
    """Write a starter adapter for your agent's code, on the target kit."""
    del lang  # only js for now
    script = directory / ("target.mjs" if flavour == "esm" else "target.cjs")
    kit_copies = [directory / KIT_FILES["cjs"], directory / KIT_FILES["esm"]] if copy_kit or kit_only else []
    writes = kit_copies if kit_only else [script, *kit_copies]
    clashes = [str(p) for p in writes if p.exists() and not (force or (kit_only and p in kit_copies))]
    if clashes:
        raise UsageError(f"init-target: {', '.join(clashes)} exists (use --force to overwrite)")
    directory.mkdir(parents=True, exist_ok=True)
    for copy in kit_copies:
        shutil.copyfile(kit_file("cjs" if copy.suffix == ".cjs" else "esm"), copy)
    if kit_only:
        click.echo(f"wrote the kit into {directory}")
        return
    label = name or directory.resolve().name
    text = (
        _STARTER.read_text(encoding="utf-8")
        .replace("__REQUIRE_KIT__", _kit_import(flavour, "copy" if copy_kit else "installed"))
        .replace("__NAME__", label)
        .replace("__SCRIPT__", str(script))
    )
    script.write_text(text, encoding="utf-8")
    click.echo(f"wrote {script}" + (f" and the kit ({', '.join(p.name for p in kit_copies)})" if kit_copies else ""))
    click.echo(f'next: map the ops onto your code, then  ctxmodel check --target exec:"node {script}"')


COMMANDS = [target_kit, init_target]
