"""Copy a few files of an npm package into a directory: ``npm pack``, then read the tarball.

Shared by ``fetch_api_reference.py`` (the API reference renderer the wheel ships) and
``fetch_axe.py`` (the accessibility checker the browser tests run). Needs Debian's ``npm``.
"""

import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence


def fetch_files(package: str, version: str, files: Sequence[str], target: pathlib.Path) -> None:
    """Copy ``files`` of ``package@version`` into ``target`` and write ``VERSION`` there."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed (Debian: apt-get install npm)")
    with tempfile.TemporaryDirectory() as scratch:
        packed = subprocess.run(  # noqa: S603 (a fixed command; the version is an argument)
            [npm, "pack", "--silent", f"{package}@{version}"],
            cwd=scratch,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()[-1]
        with tarfile.open(pathlib.Path(scratch) / packed) as archive:
            for name in files:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    sys.exit(f"{packed} has no {name}")
                (target / name).write_bytes(member.read())
    (target / "VERSION").write_text(f"{package}@{version}\n", encoding="utf-8")
