"""Fetch axe-core, the accessibility checker the console's browser test runs in Chromium.

Runs ``npm pack axe-core@VERSION`` in a temporary directory and copies its ``axe.min.js`` and
license to ``test-artifacts/axe/`` (ignored by git: a test tool, never shipped). ``make browser``
runs it; ``tests/support/accessibility.py`` reads the file.
"""

import argparse
import pathlib

from npm_files import fetch_files

PACKAGE = "axe-core"
DEFAULT_VERSION = "4.10.3"
FILES = ("axe.min.js", "LICENSE")
TARGET = pathlib.Path(__file__).resolve().parents[1] / "test-artifacts" / "axe"


def main() -> None:
    """Fetch the version given on the command line, or :data:`DEFAULT_VERSION`, unless there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", default=DEFAULT_VERSION)
    version = parser.parse_args().version
    stamp = TARGET / "VERSION"
    if stamp.exists() and stamp.read_text(encoding="utf-8").strip() == f"{PACKAGE}@{version}":
        return
    TARGET.mkdir(parents=True, exist_ok=True)
    fetch_files(PACKAGE, version, FILES, TARGET)
    print(f"{PACKAGE}@{version} -> {TARGET}")  # noqa: T201


if __name__ == "__main__":
    main()
