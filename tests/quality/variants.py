"""One way to declare a variant the gate is judged against: a module whose name says what is expected of it.

The zoo (``tests/quality/zoo``) and the outside variants (``tests/quality/outside/variants``) are both
folders of ``python:`` targets, one realistic implementation each:

- ``bug_*.py``: one mistake; the gate must fail it. The docstring's first line says the mistake, and
  the module names the clause it breaks, as ``CLAUSE = "contract §N"`` or a ``Breaks: contract §N``
  line in its docstring.
- ``legit_*.py``: a choice the contract allows (a declared policy, another order, an independent
  implementation); the gate must pass it.
- ``_*.py`` and everything else: the parts the variants are built from.

The runners, the reduced tests and the declaration test read this record, so a variant is written
the same way wherever it lives and nothing lists variants by hand.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Literal

import attrs

Expected = Literal["bug", "legit"]

__all__ = ["Expected", "Variant", "collect", "expected_of"]

_BREAKS = re.compile(r"^\s*Breaks:\s*(?P<clause>contract\s+§[\d.]+(?:\s+rule\s+\d+)?)", re.MULTILINE)


@attrs.frozen
class Variant:
    name: str  # the module's own name, ``bug_global_id_set``
    module: str  # its dotted name, ``tests.quality.zoo.bug_global_id_set``
    expected: Expected
    description: str  # the docstring's first line: the mistake, or the choice
    clause: str  # the clause a bug breaks (``contract §3.4``); a legitimate variant may name one too

    @property
    def spec(self) -> str:
        """The ``--target`` spec the gate opens it with (contract §7)."""
        return f"python:{self.module}"


def expected_of(name: str) -> Expected | None:
    """``bug`` or ``legit`` from a module's name; None for a helper module."""
    if name.startswith("bug_"):
        return "bug"
    if name.startswith("legit_"):
        return "legit"
    return None


def collect(package: str) -> list[Variant]:
    """Every variant of a package, by name, read from its source (nothing is imported: listing the
    zoo costs no target's imports)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{package} is not a package")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = []
    for path in sorted(folder.glob("*.py")):
        expected = expected_of(path.stem)
        if expected is not None:
            found.append(_read(path, f"{package}.{path.stem}", expected))
    return found


def _read(path: Path, module: str, expected: Expected) -> Variant:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    doc = ast.get_docstring(tree) or ""
    clause = ""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CLAUSE" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                clause = node.value.value
    if not clause and (m := _BREAKS.search(doc)):
        clause = m.group("clause").rstrip(".")
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return Variant(name=path.stem, module=module, expected=expected, description=first, clause=clause)
