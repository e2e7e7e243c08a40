"""The TypeScript client (clients/typescript) under test: its toolchain, its build, Node runs.

``make typescript`` installs Node's toolchain and the package's pinned dev dependencies
(``npm ci``); the helpers here install them too when ``node_modules`` is missing, build the
package once per session, and run Node's test runner with a live server's address and tokens in
the environment, showing Node's output when it fails.
"""

import fcntl
import os
import pathlib
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence

import pytest

PACKAGE = pathlib.Path(__file__).parents[2] / "clients" / "typescript"
NODE_SECONDS = 240.0
_built = threading.Lock()
_state: dict[str, bool] = {}


def tool(name: str) -> str:
    """The full path of ``node`` or ``npm``; fails the test when Node's toolchain is missing."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: run `make typescript` (make test does)")
    return found


def npm(*args: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
    """``npm <args>`` in the package, its output captured; fails the test when it fails."""
    done = subprocess.run(
        [tool("npm"), *args],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def build() -> pathlib.Path:
    """Install the dev dependencies when missing and build ``dist/`` (once per process).

    A file lock keeps two test processes (pytest-xdist) from installing or building at once.
    """
    with _built, (PACKAGE / "package.json").open("rb") as anchor:
        if not _state.get("built"):
            fcntl.flock(anchor, fcntl.LOCK_EX)
            try:
                if not (PACKAGE / "node_modules" / ".package-lock.json").exists():
                    npm("ci", "--no-audit", "--no-fund")
                npm("run", "build")
            finally:
                fcntl.flock(anchor, fcntl.LOCK_UN)
            _state["built"] = True
    return PACKAGE


def node(
    args: Sequence[str], env: Mapping[str, str], timeout: float = NODE_SECONDS
) -> subprocess.CompletedProcess[str]:
    """``node <args>`` in the package with ``env`` added; fails showing Node's output."""
    done = subprocess.run(
        [tool("node"), *args],
        cwd=PACKAGE,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"node {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def node_test(files: Sequence[str], env: Mapping[str, str]) -> str:
    """Run Node's test runner over ``files`` (under test/); its report, failing on a failure."""
    paths = [f"test/{name}" for name in files]
    return node(["--test", "--test-reporter=spec", *paths], env).stdout
