"""Fetch the API reference renderer that ``GET /docs`` serves, from the npm registry (ADR 0056).

Runs ``npm pack swagger-ui-dist@VERSION`` in a temporary directory and copies the one
standalone bundle, its stylesheet and the license files into
``packages/adapters_http/src/ecp_http/server/static/docs/``, then records the package and version in
``VERSION``. The files are committed; nothing is fetched at build or run time. To move to another
version: ``python scripts/fetch_api_reference.py 5.x.y``, then run the ``/docs`` browser test.
"""

import argparse
import pathlib

from npm_files import fetch_files

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
    pathlib.Path(__file__).resolve().parents[1]
    / "packages/adapters_http/src/ecp_http/server/static/docs"
)


def main() -> None:
    """Fetch the version given on the command line, or :data:`DEFAULT_VERSION`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", default=DEFAULT_VERSION)
    version = parser.parse_args().version
    TARGET.mkdir(parents=True, exist_ok=True)
    fetch_files(PACKAGE, version, FILES, TARGET)
    print(f"{PACKAGE}@{version} -> {TARGET}")  # noqa: T201


if __name__ == "__main__":
    main()
