"""Fetch axe-core, the accessibility checker the console's browser test runs in Chromium.

Runs ``npm pack axe-core@VERSION`` in a temporary directory and copies its ``axe.min.js`` and
license to ``test-artifacts/axe/`` (ignored by git: a test tool, never shipped). ``make browser``
runs it; ``tests/support/accessibility.py`` reads the file.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "axe-core"
DEFAULT_VERSION = "4.10.3"
FILES = ("axe.min.js", "LICENSE")
TARGET = pathlib.Path(__file__).resolve().parents[1] / "test-artifacts" / "axe"


def fetch(version: str, target: pathlib.Path) -> None:
    """Copy :data:`FILES` of ``axe-core@version`` into ``target`` and write ``VERSION``."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed (Debian: apt-get install npm)")
    with tempfile.TemporaryDirectory() as scratch:
        packed = subprocess.run(  # noqa: S603 (a fixed command; the version is an argument)
            [npm, "pack", "--silent", f"{PACKAGE}@{version}"],
            cwd=scratch,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()[-1]
        with tarfile.open(pathlib.Path(scratch) / packed) as archive:
            for name in FILES:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    sys.exit(f"{packed} has no {name}")
                (target / name).write_bytes(member.read())
    (target / "VERSION").write_text(f"{PACKAGE}@{version}\n", encoding="utf-8")


def main() -> None:
    """Fetch the version given on the command line, or :data:`DEFAULT_VERSION`, unless there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", default=DEFAULT_VERSION)
    version = parser.parse_args().version
    stamp = TARGET / "VERSION"
    if stamp.exists() and stamp.read_text(encoding="utf-8").strip() == f"{PACKAGE}@{version}":
        return
    TARGET.mkdir(parents=True, exist_ok=True)
    fetch(version, TARGET)
    print(f"{PACKAGE}@{version} -> {TARGET}")  # noqa: T201


if __name__ == "__main__":
    main()
