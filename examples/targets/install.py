"""Install one library target's pinned environment: ``python examples/targets/install.py LIBRARY``.

Each library the gate runs against lives in ``examples/targets/LIBRARY/`` with its adapter and its
pins, and is installed into an environment of its own (``examples/targets/LIBRARY/.venv`` for
Python, ``node_modules`` for Node.js), never into ctxmodel's: the library's dependencies and
ctxmodel's cannot clash, and the version under test is exactly the pinned one.

- Python (``requirements.txt``): every package pinned with its hashes, installed with
  ``pip --require-hashes --no-deps`` (a release published compromised, or a file changed on the
  index, is refused), and ctxmodel's stdlib-only target kit (``ctxmodel_target``) put on the
  environment's path with a ``.pth`` file.
- A library that needs another Python than the one running this script names it in a
  ``python-version`` file (``3.12``); the environment is made with that interpreter, found on
  ``PATH`` as ``pythonX.Y`` or under pyenv's versions, and when none is found the install stops
  with the one line that says so.
- Node.js (``package-lock.json``): ``npm ci``, which checks every package's integrity hash.

It does nothing when the environment was already made from the same pins, so it is cheap to run
before every gate run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
KIT = HERE.parents[1] / "ctxmodel" / "targetkit" / "python"
STAMP = ".ctxmodel-pins"


def _digest(*files: Path) -> str:
    sha = hashlib.sha256()
    for file in files:
        if file.exists():
            sha.update(file.read_bytes())
    return sha.hexdigest()


def _site_packages(env: Path) -> Path:
    python = env / "bin" / "python"
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


class NoInterpreter(Exception):
    """The library names a Python version this machine does not have."""


def _is_version(python: str, version: str) -> bool:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60,
        )
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def interpreter(version: str) -> str:
    """A ``pythonX.Y`` of the version asked: on ``PATH`` first (a pyenv shim of a version that is not
    selected fails its probe and is passed over), then pyenv's own versions."""
    candidates = [c for c in [shutil.which(f"python{version}")] if c]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p) for p in sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)]
    for candidate in candidates:
        if _is_version(candidate, version):
            return candidate
    raise NoInterpreter(
        f"needs Python {version} (its python-version file) and no python{version} was found on PATH "
        f"or under {pyenv}: install one (apt install python{version}-venv, or pyenv install {version})"
    )


def install_python(directory: Path) -> str:
    pins = directory / "requirements.txt"
    wanted = directory / "python-version"
    env = directory / ".venv"
    stamp = env / STAMP
    digest = _digest(pins, wanted, KIT / "ctxmodel_target.py")
    if stamp.exists() and stamp.read_text() == digest:
        return f"{env} is up to date"
    if wanted.exists():
        python = interpreter(wanted.read_text().strip())
        subprocess.run([python, "-m", "venv", "--clear", str(env)], check=True)
    else:
        venv.EnvBuilder(clear=True, with_pip=True).create(env)
    python = str(env / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--require-hashes", "--no-deps", "-r", str(pins)],
        check=True,
    )
    (_site_packages(env) / "ctxmodel_target_kit.pth").write_text(f"{KIT}\n")
    stamp.write_text(digest)
    return f"{env} installed from {pins.name}"


def install_node(directory: Path) -> str:
    lock = directory / "package-lock.json"
    stamp = directory / "node_modules" / STAMP
    digest = _digest(lock)
    if stamp.exists() and stamp.read_text() == digest:
        return f"{directory / 'node_modules'} is up to date"
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=directory, check=True)
    stamp.write_text(digest)
    return f"{directory / 'node_modules'} installed from {lock.name}"


def main(argv: list[str]) -> int:
    libraries = sorted(
        p.name for p in HERE.iterdir() if (p / "requirements.txt").exists() or (p / "package-lock.json").exists()
    )
    if len(argv) != 1 or argv[0] not in libraries:
        print(f"usage: python {Path(__file__).name} LIBRARY, one of: {', '.join(libraries)}", file=sys.stderr)
        return 2
    directory = HERE / argv[0]
    started = time.monotonic()
    try:
        if (directory / "requirements.txt").exists():
            said = install_python(directory)
        else:
            said = install_node(directory)
    except (OSError, subprocess.CalledProcessError, NoInterpreter) as exc:
        print(f"install {argv[0]}: {exc}", file=sys.stderr)
        return 1
    print(f"{said} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
