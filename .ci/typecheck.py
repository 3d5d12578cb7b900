"""mypy as configured in pyproject.toml, with strategies/ and properties/ checked as the packages they install as.

setuptools' ``package-dir`` installs the top-level folders ``strategies/`` and ``properties/`` as
``ctxmodel.strategies`` and ``ctxmodel.properties``. mypy names a file after the folders it sits in
and has no such mapping, so plain ``mypy`` finds no ``ctxmodel.strategies`` and would check the
folders as top-level ``strategies`` and ``properties``. This runs mypy's own option processing (the
``[tool.mypy]`` table, plus any arguments given here), renames the sources under each mapped folder
to their installed names, and builds them in one run: every import of ``ctxmodel.strategies...``
then resolves to the repository's file, and errors are reported at the repository's paths.

Usage: ``python .ci/typecheck.py [mypy arguments]``; the exit code is mypy's.
"""

from __future__ import annotations

import sys
import time
import tomllib
from pathlib import Path

from mypy import util
from mypy.fscache import FileSystemCache
from mypy.main import process_options, run_build
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]


def package_dirs(root: Path = ROOT) -> dict[Path, str]:
    """The mapped folders of pyproject.toml's ``[tool.setuptools] package-dir``, folder to package name."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"].get("package-dir", {})
    return {(root / folder).resolve(): package for package, folder in mapping.items() if package}


def installed_name(source: BuildSource, folders: dict[Path, str]) -> BuildSource:
    """The source under the name it is installed as, when it lies in a mapped folder."""
    if source.path is None:
        return source
    path = Path(source.path).resolve()
    for folder, package in folders.items():
        if path.is_relative_to(folder):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            module = ".".join((package, *parts))
            return BuildSource(source.path, module, source.text, str(folder.parent), source.followed)
    return source


def main(argv: list[str]) -> int:
    t0 = time.time()
    fscache = FileSystemCache()
    sources, options = process_options(argv, stdout=sys.stdout, stderr=sys.stderr, fscache=fscache)
    folders = package_dirs()
    sources = [installed_name(s, folders) for s in sources]
    _res, messages, blockers = run_build(sources, options, fscache, t0, sys.stdout, sys.stderr)
    formatter = util.FancyFormatter(sys.stdout, sys.stderr, options.hide_error_codes)
    n_errors, _notes, n_files = util.count_stats(messages)
    if n_errors:
        print(formatter.format_error(n_errors, n_files, len(sources), blockers=blockers))
        return 2 if blockers else 1
    print(formatter.format_success(len(sources)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
