"""The TypeScript client (clients/typescript) against a live server, with Node's test runner.

The module serves the app under uvicorn on loopback (its own database; webhook targets on
loopback allowed, for the receiver the webhook test runs) and runs the package's Node tests with
the address and a fresh tenant's tokens in the environment. The 503 storm has a PostgreSQL of its
own, stopped for a few seconds under a server while the client starts runs.
"""

import base64
import os
import pathlib
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest
from tests.support.e2e import gated_action_graph
from tests.support.e2e_server import serving
from tests.support.typescript import PACKAGE, build, node, node_test, tool

from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

SECRET = "ts-client-" + "s" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
ROLES = ("admin", "viewer", "worker", "approver")
GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "clients.md"
WORKER_SECONDS = 60.0
STORM_STARTS = 4
STORM_SECONDS = 4.0
"""How long the storm's database stays stopped: shorter than the client's tries last."""


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


def typescript_blocks() -> list[str]:
    """The ``js`` blocks of docs/clients.md's TypeScript section, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("\n## TypeScript\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```js\n(.*?)^```$", section, flags=re.DOTALL | re.MULTILINE)


def write_program(name: str, code: str) -> pathlib.Path:
    """``code`` as a module inside the package (so that ``ecp-client`` names the package)."""
    folder = PACKAGE / "dist" / "doc-check"
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(code, encoding="utf-8")
    return program


@pytest.mark.spec("C18 client-ts-docs")
def test_the_guides_quickstart_runs_as_written(package, server):
    quickstart, _ = typescript_blocks()
    env = environment(server)
    program = write_program("quickstart.mjs", quickstart)
    done = node([str(program)], {**env, "ECP_TOKEN": env["ECP_ADMIN_TOKEN"]})
    assert done.stdout.splitlines() == ["waiting_approval", "completed true"], done.stdout


@pytest.mark.spec("C18 client-ts-docs")
def test_the_guides_worker_runs_as_written_and_stops_on_sigterm(package, server):
    _, worker = typescript_blocks()
    env = environment(server)
    program = write_program("worker.mjs", worker)
    with subprocess.Popen(
        [tool("node"), str(program)],
        cwd=PACKAGE,
        env={**os.environ, **env, "ECP_TOKEN": env["ECP_ADMIN_TOKEN"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + WORKER_SECONDS
        while not any("task completed" in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines)
            line = process.stdout.readline()
            assert line, f"the worker ended early:\n{''.join(lines)}"
            lines.append(line)
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=WORKER_SECONDS)
    output = "".join(lines) + rest
    assert process.returncode == 0, output
    assert "worker stopped" in output
    assert re.search(r"task completed task_id=\S+ run_id=\S+", output), output


@pytest.mark.spec("C18 client-ts-outage")
def test_idempotent_starts_survive_a_503_storm_with_one_run_each(package, outage_database):
    url, pg_ctl = outage_database
    settings = Settings(
        database_url=url,
        jwt_secret=SECRET,
        audit_signing_key=SIGNING_KEY,
        dispatch_poll_seconds=0.05,
        database_pool_timeout_seconds=2.0,
    )
    env = environment("")
    with serving(lambda _: settings) as (base_url, client, _):
        admin = {"Authorization": f"Bearer {env['ECP_ADMIN_TOKEN']}"}
        assert (
            client.post("/v1/graphs", json=gated_action_graph(), headers=admin).status_code == 201
        )
        deployment = {"deployment_ref": "storm", "graph_id": "gated-refund"}
        assert client.post("/v1/deployments", json=deployment, headers=admin).status_code == 201
        env |= {"ECP_URL": base_url, "ECP_DEPLOYMENT": "storm", "ECP_STARTS": str(STORM_STARTS)}
        pg_ctl.stop_fast()
        with subprocess.Popen(
            [tool("node"), "--test", "--test-reporter=spec", "test/outage/outage.test.mjs"],
            cwd=PACKAGE,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ) as process:
            time.sleep(STORM_SECONDS)
            pg_ctl.start()
            output, _ = process.communicate(timeout=WORKER_SECONDS)
        assert process.returncode == 0, output
        listed = client.get("/admin/runs", headers=admin).json()
    assert listed["total"] == STORM_STARTS, listed
