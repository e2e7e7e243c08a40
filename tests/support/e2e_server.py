"""A real ECP server for end-to-end tests: uvicorn in a background thread, on a fresh database.

One server serves the whole e2e session (``ecp_server``); every test gets its own tenant, so
tests never see each other's graphs, deployments or runs. Requests go through ``httpx.Client``
over a real TCP connection to 127.0.0.1.
"""

import base64
import contextlib
import itertools
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from tests.support.browser import browser
from tests.support.e2e import Caller, EcpServer

from ecp_http.config.settings import Settings
from ecp_http.startup.app import create_app
from ecp_postgres import create_database, drop_database

__all__ = ["admin", "browser", "e2e_database", "ecp_server", "serving", "tenant"]

JWT_SECRET = "e2e-" + "s" * 40
SIGNING_SEED = bytes(range(100, 132))
STARTUP_SECONDS = 30.0
_databases = itertools.count()


def _listening_socket() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1 (handed to uvicorn, so no port race)."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only then; without
    # it Nagle's algorithm and delayed ACKs add 40 ms to every keep-alive request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def _wait_until_serving(
    client: httpx.Client, server: uvicorn.Server, thread: threading.Thread
) -> None:
    """Wait for the lifespan to start and ``/health/live`` to answer (any HTTP answer counts).

    Whether /health/live answers 200 without credentials is a test of its own
    (``test_health_and_signing_keys_are_public``), so that a failure there names itself
    instead of failing every test's setup.
    """
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if not thread.is_alive():
            pytest.fail("the uvicorn thread ended during startup (see the captured log)")
        if server.started:
            try:
                client.get("/health/live", timeout=2.0)
            except httpx.TransportError:
                pass
            else:
                return
        time.sleep(0.05)
    pytest.fail(f"the server did not serve /health/live within {STARTUP_SECONDS:.0f} s")


@pytest.fixture(scope="session")
def e2e_database(postgres_url, migrated_template) -> Iterator[str]:
    """A fresh, migrated database for the e2e server, dropped at the end of the session."""
    name = f"ecp_e2e_{os.getpid()}_{next(_databases)}"
    url = create_database(postgres_url, name, template=migrated_template)
    yield url
    drop_database(postgres_url, name)


@contextlib.contextmanager
def serving(settings_for: Callable[[str], Settings]) -> Iterator[tuple[str, httpx.Client, Any]]:
    """The app under uvicorn in a background thread on a free loopback port, until the block ends.

    ``settings_for`` gets the server's base URL (some settings name it: a redirect URI, the
    browser origin). Yields the base URL, a client of it, and the app; shuts down (workers
    drained) at the end.
    """
    sock = _listening_socket()
    host, port = sock.getsockname()
    base_url = f"http://{host}:{port}"
    app = create_app(settings_for(base_url))
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="e2e-uvicorn", daemon=True
    )
    thread.start()
    try:
        with httpx.Client(base_url=base_url, timeout=30.0) as client:
            _wait_until_serving(client, server, thread)
            yield base_url, client, app
    finally:
        server.should_exit = True  # the lifespan's shutdown drains the dispatcher
        thread.join(60)
        sock.close()
    assert not thread.is_alive(), "uvicorn did not shut down within 60 s"
    assert not app.state.runtime.dispatcher.alive, "the lifespan did not stop the dispatcher"


@pytest.fixture(scope="session")
def ecp_server(e2e_database) -> Iterator[EcpServer]:
    """The ECP app under uvicorn in a background thread; shut down (workers drained) at the end."""
    settings = Settings(
        database_url=e2e_database,
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(SIGNING_SEED).decode("ascii"),
        host="127.0.0.1",
        port=0,
        dispatch_workers=2,
        dispatch_poll_seconds=0.05,
    )
    with serving(lambda _: settings) as (base_url, client, _):
        yield EcpServer(
            base_url=base_url,
            client=client,
            jwt_secret=JWT_SECRET,
            signing_seed=SIGNING_SEED,
        )


@pytest.fixture
def tenant() -> str:
    """A tenant of this test alone."""
    return f"e2e-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def admin(ecp_server, tenant) -> Caller:
    """An admin of this test's tenant."""
    return ecp_server.caller(tenant, "admin")
