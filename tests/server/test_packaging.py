"""What the lock gives `make run` and `make test` (ADR 0057): serving needs no test tool."""

import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).resolve().parents[2]
UV = pathlib.Path(sys.executable).with_name("uv")
TEST_TOOLS = {"pytest", "hypothesis", "mypy", "ruff", "statsmodels", "selenium", "schemathesis"}


def locked(*groups: str) -> set[str]:
    """The third-party distributions a sync with these flags installs, read from uv.lock alone."""
    done = subprocess.run(
        [UV, "export", "--frozen", "--no-emit-workspace", "--no-hashes", *groups],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return {m[1] for m in re.finditer(r"^([a-z0-9][a-z0-9._-]*)==", done.stdout, re.MULTILINE)}


def test_make_run_installs_the_server_with_its_embedded_postgres_and_no_test_tool():
    serving = locked("--no-default-groups")  # the flags of the Makefile's serve stamp
    assert {"uvicorn", "starlette", "pgserver", "psycopg", "psycopg-binary"} <= serving
    assert not serving & TEST_TOOLS


def test_make_test_adds_the_dev_group():
    assert TEST_TOOLS | {"uv", "opentelemetry-sdk"} <= locked("--group", "dev")
