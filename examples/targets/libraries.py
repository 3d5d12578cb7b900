"""Which field libraries are here, how to start one's adapter, and its configurations.

Shared by ``gate_all.py``, ``benchmarks/bench_libraries.py`` and the round-trip test, so that "a
library" means the same thing everywhere: a folder of ``examples/targets/`` with pins
(``requirements.txt`` for Python, ``package-lock.json`` for Node.js). Standard library only.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def library_dirs() -> list[Path]:
    """Every library folder, installed or not."""
    return sorted(
        p for p in HERE.iterdir() if (p / "requirements.txt").exists() or (p / "package-lock.json").exists()
    )


def adapter_command(library: Path) -> list[str] | None:
    """The adapter's command (paths relative to the repository's root, where it runs), or None when
    the library's environment is not installed."""
    if (library / "requirements.txt").exists():
        python = library / ".venv" / "bin" / "python"
        if not python.exists():
            return None
        return [str(python.relative_to(ROOT)), str((library / "target.py").relative_to(ROOT))]
    if (library / "node_modules").is_dir():
        return ["node", str((library / "target.mjs").relative_to(ROOT))]
    return None


def configurations(argv: list[str]) -> list[str]:
    """What the adapter's ``--list`` prints."""
    listed = subprocess.run([*argv, "--list"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return listed.stdout.split()


def selected(names: list[str]) -> tuple[list[tuple[str, str, list[str]]], list[str]]:
    """``(library, configuration, adapter argv)`` for each ``LIBRARY`` or ``LIBRARY:CONFIG`` named
    (every installed one when none is), and the named libraries that are not installed."""
    wanted: dict[str, set[str]] = {}
    for item in names:
        lib, _, config = item.partition(":")
        wanted.setdefault(lib, set()).update({config} if config else set())
    runs: list[tuple[str, str, list[str]]] = []
    missing: list[str] = []
    for library in library_dirs():
        if names and library.name not in wanted:
            continue
        argv = adapter_command(library)
        if argv is None:
            missing.append(library.name)
            continue
        only = wanted.get(library.name) or None
        runs += [(library.name, c, [*argv, c]) for c in configurations(argv) if only is None or c in only]
    return runs, missing
