"""The six packages as a user gets them: wheels built from the checkout, installed in an empty venv.

``pip install ecp-http`` (here ``uv pip install``, from the built wheels and the lock's versions
in the uv cache that ``make install`` filled, with no network) serves against
``ECP_DATABASE_URL`` without pgserver, and without a URL says in one line what to install. The
wheels carry their README, licence, URLs, ``py.typed`` and pinned siblings (ADR 0057).
"""

import email.parser
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator

import httpx
import pytest

from ecp_http import version
from ecp_postgres import create_database, drop_database
from ecp_postgres.embedded import MISSING_PGSERVER

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
UV = pathlib.Path(sys.executable).with_name("uv")
PACKAGES = {
    "ecp_core": "core",
    "ecp_postgres": "adapters_postgres",
    "ecp_http": "adapters_http",
    "ecp_idp": "adapters_idp",
    "ecp_billing": "adapters_billing",
    "ecp_client": "client",
}
SIBLINGS = ("ecp-core", "ecp-postgres", "ecp-http", "ecp-idp", "ecp-billing", "ecp-client")
STARTUP_SECONDS = 60.0
VERSION = version()  # every package's (ADR 0096)


def uv(*args: str | pathlib.Path) -> str:
    """Run uv in the checkout; its output, or the test fails with it."""
    done = subprocess.run([UV, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, pathlib.Path]:
    """The six wheels, built from the checkout, by import name."""
    out = tmp_path_factory.mktemp("wheels")
    uv("build", "--offline", "--all-packages", "--wheel", "--out-dir", out)
    return {name: next(out.glob(f"{name}-{VERSION}-*.whl")) for name in PACKAGES}


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheels) -> pathlib.Path:
    """An empty venv with ``ecp-http`` and its dependencies only: no extra, no dev tool.

    The third-party dependencies come at the lock's versions, from uv's cache where ``make
    install`` filled it (from PyPI for any wheel the cache lacks, as when the test venv was made
    another way), then ``ecp-http`` from the wheels, resolved offline against what is installed.
    """
    where = tmp_path_factory.mktemp("venv") / "venv"
    pins = where.with_name("pylock.toml")
    python = where / "bin" / "python"
    uv("venv", "--python", sys.executable, where)
    uv(
        "export",
        "--frozen",
        "--package",
        "ecp-http",
        "--no-dev",
        "--no-emit-workspace",
        "--format",
        "pylock.toml",
        "--output-file",
        pins,
    )
    uv("pip", "install", "--python", python, "--requirements", pins)
    uv(
        "pip",
        "install",
        "--offline",
        "--python",
        python,
        "--find-links",
        wheels["ecp_http"].parent,
        "ecp-http",
    )
    return where


def metadata(wheel: pathlib.Path) -> email.message.Message:
    """The wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode())


def test_each_wheel_carries_readme_licence_urls_types_and_pinned_siblings(wheels):
    licence = (ROOT / "LICENSE").read_bytes()
    for name, wheel in wheels.items():
        with zipfile.ZipFile(wheel) as archive:
            files = archive.namelist()
            assert f"{name}/py.typed" in files
            licences = [n for n in files if n.endswith(".dist-info/licenses/LICENSE")]
            assert [archive.read(n) for n in licences] == [licence]
        meta = metadata(wheel)
        assert meta["License-Expression"] == "Apache-2.0"
        assert meta["Description-Content-Type"] == "text/markdown"
        assert meta.get_payload() == (ROOT / "packages" / PACKAGES[name] / "README.md").read_text()
        assert {url.split(",")[0] for url in meta.get_all("Project-URL")} >= {
            "Homepage",
            "Documentation",
            "Source",
            "Issues",
        }
        assert "Typing :: Typed" in meta.get_all("Classifier")
        for requirement in meta.get_all("Requires-Dist") or []:
            sibling = re.match(r"(ecp-[a-z]+)(\[[a-z,]+\])?([^;]*)", requirement)
            if sibling and sibling[1] in SIBLINGS:
                assert sibling[3] == f"=={VERSION}", requirement


def test_pgserver_and_the_binary_driver_are_extras_only(wheels):
    postgres = metadata(wheels["ecp_postgres"]).get_all("Requires-Dist")
    assert "pgserver>=0.1.4; extra == 'embedded'" in postgres
    assert "psycopg[binary]>=3.2; extra == 'binary'" in postgres
    assert "psycopg>=3.2" in postgres
    unconditional = [r for r in postgres if "extra ==" not in r]
    assert not [r for r in unconditional if r.startswith(("pgserver", "psycopg[binary]"))]
    http = metadata(wheels["ecp_http"]).get_all("Requires-Dist")
    assert f"ecp-postgres=={VERSION}" in http
    assert f"ecp-postgres[embedded]=={VERSION}; extra == 'embedded'" in http


def environment(**settings: str) -> dict[str, str]:
    """This process's environment without ECP settings or a path into the dev venv."""
    kept = {
        k: v for k, v in os.environ.items() if not k.startswith(("ECP_", "PYTHON", "VIRTUAL_ENV"))
    }
    return kept | settings


def test_the_empty_venv_has_neither_pgserver_nor_the_binary_driver(venv):
    python = str(venv / "bin" / "python")
    missing = subprocess.run(
        [python, "-c", "import pgserver"],
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    assert missing.returncode == 1
    assert "No module named 'pgserver'" in missing.stderr
    driver = subprocess.run(
        [python, "-c", "import psycopg; print(psycopg.pq.__impl__)"],
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    assert driver.stdout.strip() == "python", driver.stderr  # the system's libpq, through ctypes


def test_without_a_database_url_serve_names_the_extra_in_one_line(venv, tmp_path):
    done = subprocess.run(
        [venv / "bin" / "ecp", "serve", "--host", "127.0.0.1", "--port", "0"],
        env=environment(ECP_DATA_DIR=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert MISSING_PGSERVER in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.fixture
def empty_database(postgres_url) -> Iterator[str]:
    """URL of a new database with no schema: ``ecp serve`` applies the wheel's migrations."""
    name = f"ecp_wheel_{os.getpid()}"
    drop_database(postgres_url, name)
    yield create_database(postgres_url, name)
    drop_database(postgres_url, name)


def test_the_installed_server_serves_with_a_database_url(venv, empty_database, tmp_path):
    out = tmp_path / "serve.out"
    with out.open("w") as sink:
        server = subprocess.Popen(
            [venv / "bin" / "ecp", "serve", "--host", "127.0.0.1", "--port", "0"],
            env=environment(ECP_DATABASE_URL=empty_database, ECP_DATA_DIR=str(tmp_path / "data")),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not (found := re.search(r"ECP is serving on (http://\S+)", out.read_text())):
            assert server.poll() is None, out.read_text()
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        ready = httpx.get(f"{found[1]}/health/ready", timeout=10.0)
        assert ready.status_code == 200, ready.text
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=STARTUP_SECONDS) == 0, out.read_text()
