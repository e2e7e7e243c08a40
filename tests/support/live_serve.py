"""``ecp serve`` as a real process on loopback, for the client libraries' tests.

The server runs this venv's ``ecp`` script (or another venv's: the rolling upgrade test serves the
previous release's) against a database the test gives, with a JWT secret and an audit signing key
of its own; tests mint tokens with :meth:`LiveServer.token`.
"""

import base64
import contextlib
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

from ecp_http.server.auth import mint_token

ECP = pathlib.Path(sys.executable).parent / "ecp"
JWT_SECRET = "live-" + "s" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
STARTUP_SECONDS = 60.0


@dataclass(frozen=True)
class LiveServer:
    """A running ``ecp serve``: its base URL, and tokens for its tenants."""

    base_url: str
    log: pathlib.Path

    def token(self, tenant: str, *roles: str, subject: str = "client-test") -> str:
        """A bearer token for ``tenant`` with ``roles``, valid for an hour."""
        return mint_token(
            JWT_SECRET, tenant=tenant, roles=list(roles), subject=subject, ttl_seconds=3600
        )


def _environment(settings: dict[str, str]) -> dict[str, str]:
    # Nothing that would point another venv's interpreter at this checkout's packages.
    foreign = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ECP_") and k not in foreign}
    return kept | {"ECP_JWT_SECRET": JWT_SECRET, "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY} | settings


@contextlib.contextmanager
def ecp_serve(
    database_url: str, folder: pathlib.Path, *, ecp: pathlib.Path = ECP, **settings: str
) -> Iterator[LiveServer]:
    """``ecp serve`` (the script ``ecp``) on a free loopback port over ``database_url``.

    ``settings`` are more ``ECP_*`` variables. It serves until the block ends, is stopped with
    SIGTERM and must exit 0.
    """
    log = folder / "serve.log"
    # A data directory of its own: two servers of parallel test workers never share the lock.
    own = {"ECP_DATABASE_URL": database_url, "ECP_DATA_DIR": str(folder / "ecp-data")}
    env = _environment({**own, **settings})
    with log.open("w") as sink:
        server = subprocess.Popen(
            [str(ecp), "serve", "--host", "127.0.0.1", "--port", "0"],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not (found := re.search(r"ECP is serving on (http://\S+)", log.read_text())):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        ready = httpx.get(f"{found[1]}/health/ready", timeout=10.0)
        assert ready.status_code == 200, ready.text
        yield LiveServer(base_url=found[1], log=log)
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=STARTUP_SECONDS)
    assert code == 0, log.read_text()
