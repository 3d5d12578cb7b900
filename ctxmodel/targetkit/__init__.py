"""The target kits shipped with ctxmodel: JavaScript (``js/``) and Python (``python/``).

The JavaScript kit (``js/ctxmodel-target.cjs``) is for agents written in TypeScript;
``ctxmodel target-kit --path`` prints where it is, ``ctxmodel init-target --lang js`` writes a
starter adapter on it. The Python kit (``python/ctxmodel_target.py``, standard library only) is
for a Python library gated in an environment of its own, where ctxmodel is not installed.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["KIT_FILES", "kit_dir", "kit_file", "python_kit_dir"]

#: The kit's entry points: one source (CommonJS) and an ES-module wrapper around it.
KIT_FILES = {"cjs": "ctxmodel-target.cjs", "esm": "ctxmodel-target.mjs"}


def kit_dir() -> Path:
    """The folder holding the kit's files."""
    return Path(__file__).resolve().parent / "js"


def kit_file(flavour: str = "cjs") -> Path:
    """The kit's CommonJS (``cjs``) or ES-module (``esm``) entry point."""
    try:
        return kit_dir() / KIT_FILES[flavour]
    except KeyError:
        raise ValueError(f"kit flavour {flavour!r}: expected one of {', '.join(KIT_FILES)}") from None


def python_kit_dir() -> Path:
    """The folder to put on a foreign interpreter's path for ``import ctxmodel_target``."""
    return Path(__file__).resolve().parent / "python"
