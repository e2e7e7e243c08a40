"""The Python client against a live ``ecp serve``: resources, pages, errors, webhooks, workers.

One ``ecp serve`` process serves the module (on a database of its own, loopback webhook targets
allowed); each test works in a tenant of its own.
"""

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.e2e import example_graph
from tests.support.live_serve import LiveServer, ecp_serve
from tests.support.receiver import Received, receiver

from ecp_client import AsyncClient, Client, ConnectionFailed, RetryPolicy
from ecp_client.models import ClaimedTask
from ecp_client.problems import (
    ApprovalAlreadyResolved,
    ApprovalChanged,
    Forbidden,
    NotFound,
    Unauthenticated,
    ValidationFailed,
)
from ecp_client.webhooks import WebhookVerificationFailed, verify
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

ROOT = pathlib.Path(__file__).parents[2]
PAGE = 2
MANY = 5
TOPIC = "payments.charge"


@pytest.fixture(scope="module")
def live(postgres_url, migrated_template, tmp_path_factory) -> Iterator[LiveServer]:
    name = f"ecp_pyclient_{os.getpid()}"
    drop_database(postgres_url, name)
    url = create_database(postgres_url, name, template=migrated_template)
    folder = tmp_path_factory.mktemp("serve")
    settings = {"ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true", "ECP_WEBHOOK_POLL_SECONDS": "0.1"}
    with ecp_serve(url, folder, ECP_DISPATCH_POLL_SECONDS="0.05", **settings) as server:
        yield server
    drop_database(postgres_url, name)


@pytest.fixture
def tenant() -> str:
    return f"py-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def admin(live, tenant) -> Iterator[Client]:
    with Client(live.base_url, token=live.token(tenant, "admin")) as client:
        yield client


def task_graph(graph_id: str) -> dict[str, Any]:
    """charge (a task node of ``TOPIC``) -> done."""
    return {
        "graph_id": graph_id,
        "entry": "charge",
        "nodes": [
            {
                "id": "charge",
                "kind": "task",
                "action": {
                    "name": TOPIC,
                    "fingerprint": "sha256:" + "0" * 64,
                    "arguments": {"amount": "12.50"},
                    "side_effect": "idempotent",
                },
                "lock_seconds": 30,
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "charge", "target": "done"}],
    }


def until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.spec("C18 client-py-resources")
def test_the_quickstart_runs_through_the_sync_client(admin):
    registered = admin.graphs.register(example_graph())
    assert registered.graph_id == "refund-triage"
    deployment = admin.deployments.create("refunds", "refund-triage")
    assert deployment.graph_version_ref == "refund-triage@1"
    run = admin.runs.start("refunds", {"order": "A-1001"}, wait_seconds=10)
    assert run.status == "waiting_approval"
    (approval,) = admin.approvals.list(run_id=run.run_id, status="pending")
    assert approval.approval_id == run.pending_approval_ids[0]
    answer = admin.approvals.resolve(approval, "approve", reason="fine")
    assert answer.approval.status == "resolved"
    until(lambda: admin.runs.get(run.run_id).status == "completed")
    report = admin.runs.verify(run.run_id)
    assert report.verified
    assert report.signature_verified
    timeline = admin.runs.timeline(run.run_id)
    assert len(timeline.entries) == report.record_count
    bundle = admin.runs.bundle(run.run_id)
    assert len(bundle.records) == report.record_count


@pytest.mark.spec("C18 client-py-resources", "C18 client-py-pages")
def test_the_async_client_starts_approves_and_pages(live, tenant):
    async def scenario() -> list[str]:
        async with AsyncClient(live.base_url, token=live.token(tenant, "admin")) as client:
            await client.graphs.register(example_graph())
            await client.deployments.create("refunds", "refund-triage")
            started = [
                await client.runs.start("refunds", {"n": n}, wait_seconds=10) for n in range(3)
            ]
            pending = [
                approval async for approval in client.approvals.list(status="pending", page_size=1)
            ]
            assert {a.run_id for a in pending} == {run.run_id for run in started}
            for approval in pending:
                await client.approvals.resolve(approval, "approve")
            return [run.run_id async for run in client.runs.list(page_size=PAGE)]

    listed = asyncio.run(scenario())
    assert len(listed) == len(set(listed)) == 3


@pytest.mark.spec("C18 client-py-pages")
def test_every_list_iterates_across_several_pages(admin, live, tenant):
    for n in range(MANY):
        admin.graphs.register(task_graph(f"g{n}"))
        admin.deployments.create(f"d{n}", f"g{n}")
    admin.graphs.register(example_graph())
    admin.deployments.create("refunds", "refund-triage")
    started = [admin.runs.start("refunds", {"n": n}, wait_seconds=10) for n in range(MANY)]
    tasks = [admin.runs.start(f"d{n}", wait_seconds=10) for n in range(MANY)]
    for n in range(MANY):
        admin.webhooks.create(f"d{n}", f"http://127.0.0.1:9/hook/{n}", ["run.completed"])

    graphs = list(admin.graphs.list(page_size=PAGE))
    assert sorted(g.graph_id for g in graphs) == sorted(
        [*(f"g{n}" for n in range(MANY)), "refund-triage"]
    )
    refs = [d.deployment_ref for d in admin.deployments.list(page_size=PAGE)]
    assert sorted(refs) == sorted([*(f"d{n}" for n in range(MANY)), "refunds"])
    runs = [r.run_id for r in admin.runs.list(page_size=PAGE)]
    assert sorted(runs) == sorted(r.run_id for r in [*started, *tasks])
    approvals = [a.run_id for a in admin.approvals.list(status="pending", page_size=PAGE)]
    assert sorted(approvals) == sorted(r.run_id for r in started)
    listed_tasks = [t.run_id for t in admin.tasks.list(topic=TOPIC, page_size=PAGE)]
    assert sorted(listed_tasks) == sorted(r.run_id for r in tasks)
    assert len(list(admin.webhooks.list())) == MANY
    assert list(admin.decisions.list(page_size=PAGE)) == []


@pytest.mark.spec("C18 client-py-resources")
def test_evidence_batches_are_stored_once_by_event_id(admin):
    document = json.loads((ROOT / "clients" / "openapi.json").read_text())
    paths = document["paths"]
    example = {
        kind: paths[f"/v1/evidence/{kind}"]["post"]["requestBody"]["content"]["application/json"][
            "example"
        ]["events"]
        for kind in ("executions", "outcomes", "charge-revisions", "source-inventories")
    }
    first = admin.evidence.executions(example["executions"])
    assert (first.received, first.stored, first.replayed) == (len(example["executions"]),) * 2 + (
        0,
    )
    again = admin.evidence.executions(example["executions"])
    assert (again.stored, again.replayed) == (0, len(example["executions"]))
    assert admin.evidence.outcomes(example["outcomes"]).stored == len(example["outcomes"])
    revisions = admin.evidence.charge_revisions(example["charge-revisions"])
    assert revisions.stored == len(example["charge-revisions"])
    inventories = admin.evidence.source_inventories(example["source-inventories"])
    assert inventories.stored == len(example["source-inventories"])


@pytest.mark.spec("C18 client-py-errors")
def test_each_refusal_raises_the_class_of_its_code_with_its_request_id(admin, live, tenant):
    with pytest.raises(NotFound) as missing:
        admin.runs.get("no-such-run")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert missing.value.request_id
    with pytest.raises(ValidationFailed) as invalid:
        admin.deployments.create("", "refund-triage")
    assert invalid.value.status == 422
    assert [error.loc for error in invalid.value.errors] == [("deployment_ref",)]
    with Client(live.base_url, token="not-a-token") as stranger, pytest.raises(Unauthenticated):
        list(stranger.graphs.list())
    analyst = Client(live.base_url, token=live.token(tenant, "analyst"))
    with analyst, pytest.raises(Forbidden) as forbidden:
        analyst.graphs.register(example_graph())
    assert forbidden.value.status == 403
    admin.graphs.register(example_graph())
    admin.deployments.create("refunds", "refund-triage")
    run = admin.runs.start("refunds", wait_seconds=10)
    approval = admin.approvals.get(run.pending_approval_ids[0])
    admin.approvals.resolve(approval, "approve")
    with pytest.raises(ApprovalChanged) as stale:
        admin.approvals.resolve(approval, "approve")  # as read before it was resolved
    assert (stale.value.status, stale.value.code) == (409, "approval_changed")
    with pytest.raises(ApprovalAlreadyResolved) as again:
        admin.approvals.resolve(admin.approvals.get(approval.approval_id), "approve")
    assert (again.value.status, again.value.code) == (409, "approval_already_resolved")


@pytest.mark.spec("C18 client-py-retries")
def test_a_server_that_is_not_there_is_tried_again_then_connection_failed():
    with receiver() as hook:
        url = hook.url.removesuffix("/hook")
    quick = RetryPolicy(attempts=3, backoff=0.05)
    began = time.monotonic()
    with Client(url, token="t", retry=quick) as client, pytest.raises(ConnectionFailed):
        client.runs.get("r")
    assert 0.15 <= time.monotonic() - began < 5


@pytest.mark.spec("C18 client-py-webhooks")
def test_a_real_delivery_verifies_and_a_tampered_one_is_refused(admin):
    admin.graphs.register(example_graph())
    admin.deployments.create("refunds", "refund-triage")

    def judge(got: Received) -> int:
        try:
            verify(got.headers, got.body, secret)
        except WebhookVerificationFailed:
            return 400
        return 204

    with receiver() as hook:
        created = admin.webhooks.create("refunds", hook.url, ["run.started"])
        secret = created.secret
        hook.judge = judge
        admin.webhooks.send_test_event(created.subscription.subscription_id)
        until(lambda: len(hook.received) >= 1)
    got = hook.received[0]
    assert got.answered == 204
    event = verify(got.headers, got.body, secret)
    assert event["event_type"] == "webhook.test"
    assert verify(got.headers, got.body, ["whsec_" + "A" * 43, secret]) == event  # a rotation
    service_only = {k: v for k, v in got.headers.items() if not k.startswith("webhook-")}
    assert verify(service_only, got.body, secret) == event
    tampered = got.body.replace(b"webhook.test", b"webhook.tesT")
    for headers, body in [
        (got.headers, tampered),
        (service_only, tampered),
        ({**got.headers, "webhook-signature": "v1,AAAA"}, got.body),
        ({**got.headers, "x-service-signature": "00" * 32}, got.body),
    ]:
        with pytest.raises(WebhookVerificationFailed):
            verify(headers, body, secret)
    with pytest.raises(WebhookVerificationFailed, match="too far"):
        verify(got.headers, got.body, secret, now=int(got.headers["webhook-timestamp"]) + 301)
    with pytest.raises(WebhookVerificationFailed):
        verify(got.headers, got.body, "whsec_" + "B" * 43)


def claimed(admin: Client) -> list[ClaimedTask]:
    return admin.tasks.claim("probe", [TOPIC], wait_seconds=0)


@pytest.mark.spec("C18 client-py-worker")
def test_task_calls_claim_heartbeat_complete_and_fail(admin):
    admin.graphs.register(task_graph("charge"))
    admin.deployments.create("charge", "charge")
    first = admin.runs.start("charge", wait_seconds=10)
    second = admin.runs.start("charge", wait_seconds=10)
    one, two = admin.tasks.claim("probe", [TOPIC], max_tasks=2, wait_seconds=0)
    assert {one.run_id, two.run_id} == {first.run_id, second.run_id}
    later = admin.tasks.heartbeat(one, lock_seconds=60)
    assert later.locked_until > one.locked_until
    assert admin.tasks.complete(one, {"charged": "12.50"}).status == "completed"
    assert admin.tasks.fail(two, "card declined").status in {"failed", "waiting"}
    assert admin.tasks.get(one.task_id).status == "completed"


@pytest.mark.spec("C18 client-py-worker", "C18 client-py-guide")
def test_the_guides_worker_completes_tasks_and_stops_cleanly_on_sigterm(
    live, admin, tenant, tmp_path
):
    program = tmp_path / "worker.py"
    program.write_text(guide_python_blocks()[-1], encoding="utf-8")
    admin.graphs.register(task_graph("charge"))
    admin.deployments.create("charge", "charge")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECP_")}
    env |= {"ECP_URL": live.base_url, "ECP_TOKEN": live.token(tenant, "worker")}
    log = tmp_path / "worker.log"
    with log.open("w") as sink:
        worker = subprocess.Popen([sys.executable, str(program)], env=env, stderr=sink)
    try:
        runs = [admin.runs.start("charge", {"order_id": f"A-{n}"}) for n in range(3)]
        for run in runs:
            until(lambda run=run: admin.runs.get(run.run_id).status == "completed")
        outputs = [admin.runs.get(run.run_id).output for run in runs]
        assert [o["charged"] for o in outputs] == ["12.50"] * 3
        assert [o["order"] for o in outputs] == ["A-0", "A-1", "A-2"]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0, log.read_text()
    finally:
        if worker.poll() is None:
            worker.kill()
    text = log.read_text()
    assert text.count("task completed") == 3, text
    assert "worker stopped" in text
    assert "Traceback" not in text


def guide_python_blocks() -> list[str]:
    """The ``python`` blocks of docs/clients.md's Python section, in order."""
    guide = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    section = guide.split("## Python", 1)[1].split("\n## ", 1)[0]
    return [chunk.split("\n```", 1)[0] + "\n" for chunk in section.split("```python\n")[1:]]


@pytest.mark.spec("C18 client-py-guide")
def test_the_guides_quickstart_runs_as_written(live, tenant, tmp_path):
    program = tmp_path / "quickstart.py"
    program.write_text(guide_python_blocks()[0], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECP_")}
    env |= {"ECP_URL": live.base_url, "ECP_TOKEN": live.token(tenant, "admin")}
    done = subprocess.run(
        [sys.executable, str(program)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("started ") and lines[0].endswith(" waiting_approval")
    assert lines[1].startswith("resolved ") and lines[1].endswith(" run is completed")
    assert lines[2].startswith("audit chain verified: True records: ")
    guide = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    shown = guide.split("It prints:\n\n```text\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert [line.split()[0] for line in shown] == [line.split()[0] for line in lines]
    assert shown[2] == lines[2]
