"""The JavaScript target kit shipped with ctxmodel (``js/``): see ``js/ctxmodel-target.cjs``.

``ctxmodel target-kit --path`` prints where it is; ``ctxmodel init-target --lang js`` writes a
starter adapter on it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["KIT_FILES", "kit_dir", "kit_file"]

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
