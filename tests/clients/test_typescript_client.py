"""The TypeScript client (clients/typescript) against a live server, with Node's test runner.

The module serves the app under uvicorn on loopback (its own database; webhook targets on
loopback allowed, for the receiver the webhook test runs) and runs the package's Node tests with
the address and a fresh tenant's tokens in the environment. The 503 storm has a PostgreSQL of its
own, stopped for a few seconds under a server while the client starts runs.
"""

import base64
import os
import uuid
from collections.abc import Iterator

import pytest
from tests.support.e2e_server import serving
from tests.support.typescript import build, node_test

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

SECRET = "ts-client-" + "s" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
ROLES = ("admin", "viewer", "worker", "approver")


@pytest.fixture(scope="module")
def server(postgres_url, migrated_template) -> Iterator[str]:
    """The app under uvicorn on 127.0.0.1 over a database of this module; its base URL."""
    name = f"ecp_ts_client_{os.getpid()}"
    url = create_database(postgres_url, name, template=migrated_template)
    settings = Settings(
        database_url=url,
        jwt_secret=SECRET,
        audit_signing_key=SIGNING_KEY,
        dispatch_workers=2,
        dispatch_poll_seconds=0.05,
        webhook_allow_private_targets=True,
    )
    try:
        with serving(lambda _: settings) as (base_url, _, _):
            yield base_url
    finally:
        drop_database(postgres_url, name)


def environment(base_url: str, secret: str = SECRET) -> dict[str, str]:
    """ECP_URL and a token per role (ECP_ADMIN_TOKEN …) of a fresh tenant."""
    tenant = f"ts-{uuid.uuid4().hex[:12]}"
    env = {"ECP_URL": base_url, "ECP_TENANT": tenant}
    for role in ROLES:
        token = mint_token(secret, tenant=tenant, roles=[role], ttl_seconds=3600)
        env[f"ECP_{role.upper()}_TOKEN"] = token
    return env


@pytest.fixture(scope="module")
def package() -> None:
    build()


@pytest.mark.spec("C18 client-ts-quickstart")
def test_the_quickstart_and_run_control(package, server):
    node_test(["live/quickstart.test.mjs"], environment(server))


@pytest.mark.spec("C18 client-ts-pages")
def test_every_list_iterator_walks_every_page(package, server):
    node_test(["live/pages.test.mjs"], environment(server))


@pytest.mark.spec("C18 client-ts-errors")
def test_each_problem_code_is_its_error_class(package, server):
    node_test(["live/errors.test.mjs"], environment(server))


@pytest.mark.spec("C18 client-ts-retry")
def test_429_and_503_are_waited_out_with_one_idempotency_key(package):
    node_test(["live/retries.test.mjs"], {"ECP_URL": "http://127.0.0.1:9"})


@pytest.mark.spec("C18 client-ts-webhooks")
def test_a_delivery_is_verified_and_a_tampered_one_refused(package, server):
    node_test(["live/webhooks.test.mjs"], environment(server))


@pytest.mark.spec("C18 client-ts-worker")
def test_a_worker_process_completes_tasks_and_stops_on_sigterm(package, server):
    node_test(["live/worker.test.mjs"], environment(server))
