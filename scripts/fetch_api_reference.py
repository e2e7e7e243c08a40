"""Fetch the API reference renderer that ``GET /docs`` serves, from the npm registry (ADR 0056).

Runs ``npm pack swagger-ui-dist@VERSION`` in a temporary directory and copies the one
standalone bundle, its stylesheet and the license files into
``packages/adapters_http/src/ecp_http/server/static/docs/``, then records the package and version in
``VERSION``. The files are committed; nothing is fetched at build or run time. To move to another
version: ``python scripts/fetch_api_reference.py 5.x.y``, then run the ``/docs`` browser test.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "swagger-ui-dist"
DEFAULT_VERSION = "5.35.0"
FILES = (
    "swagger-ui-bundle.js",
    "swagger-ui.css",
    "LICENSE",
    "NOTICE",
    "swagger-ui-bundle.js.LICENSE.txt",
)
"""What is kept of the package: the bundle, its stylesheet, and the licenses they come under."""
TARGET = (
    pathlib.Path(__file__).resolve().parents[1] / "packages/adapters_http/src/ecp_http/server/static/docs"
)


def fetch(version: str, target: pathlib.Path) -> None:
    """Copy :data:`FILES` of ``swagger-ui-dist@version`` into ``target`` and write ``VERSION``."""
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
    """Fetch the version given on the command line, or :data:`DEFAULT_VERSION`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", default=DEFAULT_VERSION)
    version = parser.parse_args().version
    TARGET.mkdir(parents=True, exist_ok=True)
    fetch(version, TARGET)
    print(f"{PACKAGE}@{version} -> {TARGET}")  # noqa: T201


if __name__ == "__main__":
    main()
