"""Install one library target's pinned environment: ``python examples/targets/install.py LIBRARY``.

Each library the gate runs against lives in ``examples/targets/LIBRARY/`` with its adapter and its
pins, and is installed into an environment of its own (``examples/targets/LIBRARY/.venv`` for
Python, ``node_modules`` for Node.js), never into ctxmodel's: the library's dependencies and
ctxmodel's cannot clash, and the version under test is exactly the pinned one.

- Python (``requirements.txt``): every package pinned with its hashes, installed with
  ``pip --require-hashes --no-deps`` (a release published compromised, or a file changed on the
  index, is refused), and ctxmodel's stdlib-only target kit (``ctxmodel_target``) put on the
  environment's path with a ``.pth`` file.
- Node.js (``package-lock.json``): ``npm ci``, which checks every package's integrity hash.

It does nothing when the environment was already made from the same pins, so it is cheap to run
before every gate run.
"""

from __future__ import annotations

import hashlib
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


def install_python(directory: Path) -> str:
    pins = directory / "requirements.txt"
    env = directory / ".venv"
    stamp = env / STAMP
    digest = _digest(pins, KIT / "ctxmodel_target.py")
    if stamp.exists() and stamp.read_text() == digest:
        return f"{env} is up to date"
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
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"install {argv[0]}: {exc}", file=sys.stderr)
        return 1
    print(f"{said} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
