"""Wake-ups by LISTEN/NOTIFY (ADR 0063) on a real PostgreSQL.

Every worker here polls every ten minutes unless a test says otherwise, so work done within the
tests' generous deadlines was found because a notification woke the worker. Runs are started
through a second store, as another server process would, so nothing in the worker's own
process wakes it; the second run of each test starts after the first finished, when the worker
is idle again. Nothing here asserts a duration.
"""

import base64
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from prometheus_client import CollectorRegistry
from starlette.testclient import TestClient
from tests.support.receiver import receiver

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.background.dispatch import Dispatcher
from ecp_http.background.wakeups import WakeupMetrics, wakeup_listener
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.server.long_poll import Bell
from ecp_http.server.task_offers import TaskOffers
from ecp_http.startup.app import create_app
from ecp_postgres import PostgresStore
from ecp_postgres.notifications import (
    RUNS_MOVED,
    RUNS_RUNNABLE,
    TASKS_OFFERED,
    NotificationListener,
    RunMoved,
    TaskOffered,
    moved,
    offered,
)

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(9, 41)), key_id="wakeups")
TEN_MINUTES = 600.0
SECRET = "w" * 40
TENANT = "t"


def deployed(store: PostgresStore) -> Ecp:
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
    graph = (
        GraphBuilder("g")
        .action("a", "set", arguments={"values": {"a": 1}})
        .end("b")
        .chain("a", "b")
        .build()
    )
    ecp.graphs.register(TENANT, graph)
    ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp


def wait_for(condition: Callable[[], object], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def completed(ecp: Ecp, run_id: str) -> bool:
    return ecp.runs.get(TENANT, run_id).status.value == "COMPLETED"


def received(metrics: WakeupMetrics, channel: str) -> float:
    return metrics.received.labels(channel)._value.get()


@pytest.fixture
def woken(
    fresh_database,
) -> Iterator[tuple[Ecp, Callable[..., tuple[Dispatcher, NotificationListener]], WakeupMetrics]]:
    """A deployment seen from a "starter" store, and a factory of a worker on another store."""
    started: list[tuple[Dispatcher, NotificationListener, PostgresStore]] = []
    metrics = WakeupMetrics(CollectorRegistry())

    def worker(poll_seconds: float = TEN_MINUTES) -> tuple[Dispatcher, NotificationListener]:
        store = PostgresStore(fresh_database, max_size=4)
        dispatcher = Dispatcher(
            Ecp.build(store.unit_of_work, signer=SIGNER).runs,
            workers=1,
            poll_seconds=poll_seconds,
        )
        listener = wakeup_listener(
            fresh_database,
            dispatcher=dispatcher,
            runs_moved=Bell(),
            offers=TaskOffers(),
            metrics=metrics,
        )
        dispatcher.start()
        listener.start()
        started.append((dispatcher, listener, store))
        assert listener.wait_connected(30)
        return dispatcher, listener

    with PostgresStore(fresh_database, max_size=4) as starter:
        try:
            yield deployed(starter), worker, metrics
        finally:
            for dispatcher, listener, store in started:
                listener.stop()
                dispatcher.stop()
                store.close()


@contextlib.contextmanager
def heard_on(url: str, channel: str) -> Iterator[list[str]]:
    """The payloads of ``channel`` a listener of its own hears meanwhile, in order."""
    heard: list[str] = []
    listener = NotificationListener(url, {channel: heard.append})
    listener.start()
    try:
        assert listener.wait_connected(30)
        yield heard
    finally:
        listener.stop()


def start(ecp: Ecp) -> str:
    return ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d"))[0].run_id


@pytest.mark.spec("C8 notify-wakeups")
def test_a_dispatcher_polling_every_ten_minutes_is_woken_by_notifications(woken):
    ecp, worker, metrics = woken
    worker()
    for _ in range(2):
        run_id = start(ecp)
        wait_for(lambda run_id=run_id: completed(ecp, run_id))
    # Counted as each notification is handled, which may end after the test sees the commit.
    wait_for(lambda: received(metrics, RUNS_RUNNABLE) >= 2)
    wait_for(lambda: received(metrics, RUNS_MOVED) >= 2)  # each run's end


def terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


def reconnected(listener: NotificationListener, old_pid: int) -> bool:
    return listener.backend_pid not in (None, old_pid)


@pytest.mark.spec("C8 notify-wakeups")
def test_a_killed_listener_costs_a_poll_and_reconnects(woken, fresh_database, caplog):
    ecp, worker, _ = woken
    caplog.set_level(logging.INFO, logger="ecp_postgres.notifications")
    _, listener = worker(poll_seconds=0.5)
    old_pid = listener.backend_pid
    assert old_pid is not None
    terminate(fresh_database, old_pid)
    run_id = start(ecp)  # the notification may be lost: the poll or the reconnection finds it
    wait_for(lambda: completed(ecp, run_id))
    wait_for(lambda: reconnected(listener, old_pid))
    lost = [r for r in caplog.records if r.getMessage().startswith("notification listener lost")]
    assert [r.listener_pid for r in lost] == [old_pid]


@pytest.mark.spec("C8 notify-wakeups")
def test_after_reconnecting_notifications_wake_a_slow_poller_again(woken, fresh_database):
    ecp, worker, metrics = woken
    _, listener = worker()
    old_pid = listener.backend_pid
    assert old_pid is not None
    terminate(fresh_database, old_pid)
    wait_for(lambda: reconnected(listener, old_pid))
    before = received(metrics, RUNS_RUNNABLE)
    run_id = start(ecp)
    wait_for(lambda: completed(ecp, run_id))
    assert received(metrics, RUNS_RUNNABLE) > before


def settings(database: str, **changes: object) -> Settings:
    return Settings(
        database_url=database,
        jwt_secret=SECRET,
        audit_signing_key=base64.b64encode(bytes(range(40, 72))).decode(),
        scheduler_enabled=False,
        webhook_allow_private_targets=True,
        **changes,
    )


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant=TENANT, roles=['admin'])}"}


def metric(client: TestClient, line_start: str) -> float:
    text = client.get("/metrics", headers=auth()).text
    found = [line for line in text.splitlines() if line.startswith(line_start)]
    assert found, line_start
    return float(found[0].rsplit(" ", 1)[1])


@pytest.mark.spec("C8 notify-wakeups")
def test_prefer_wait_hears_a_run_another_process_moved(fresh_database):
    """Process A answers ``Prefer: wait`` but dispatches nothing; process B's dispatcher works."""
    app = create_app(settings(fresh_database), start_workers=False)
    with TestClient(app) as client, PostgresStore(fresh_database, max_size=4) as other:
        listener = app.state.runtime.listener
        listener.start()  # only the listener of A: its dispatcher stays stopped
        assert listener.wait_connected(30)
        assert client.post("/v1/graphs", json=EXAMPLE_GRAPH, headers=auth()).status_code == 201
        deployment = {"deployment_ref": "refunds", "graph_id": EXAMPLE_GRAPH["graph_id"]}
        assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
        dispatcher = Dispatcher(
            Ecp.build(other.unit_of_work, signer=SIGNER).runs, workers=1, poll_seconds=0.05
        )
        dispatcher.start()
        try:
            answer = client.post(
                "/runs",
                json={"deployment_ref": "refunds", "input": {"order": "A-1"}},
                headers={**auth(), "Prefer": "wait=30"},
            )
        finally:
            dispatcher.stop()
        assert answer.status_code == 201
        assert answer.json()["status"] == "waiting_approval"
        moved = 'ecp_notifications_received_total{channel="ecp_runs_moved"}'
        assert metric(client, moved) >= 1
        assert metric(client, "ecp_notification_listener_up") == 1


KEYED = "C10 tenant-keyed-claim-wakeups"


def deploy_task(ecp: Ecp, tenant: str) -> None:
    graph = GraphBuilder("g").task("work", "keyed.work").end("done").chain("work", "done").build()
    ecp.graphs.register(tenant, graph)
    ecp.graphs.deploy(tenant, CreateDeploymentRequest(deployment_ref="d", graph_id="g"))


def waiting_claim(
    client: TestClient,
    answers: list[dict[str, object]],
    topic: str = "keyed.work",
    seconds: int = 30,
) -> threading.Thread:
    """A worker of TENANT long-polling for a task of ``topic``; its answer goes to ``answers``."""
    body = {"worker_id": "w", "topics": [topic], "wait_seconds": seconds}
    token = mint_token(SECRET, tenant=TENANT, roles=["worker"])
    headers = {"Authorization": f"Bearer {token}"}
    waiting = threading.Thread(
        target=lambda: answers.append(
            client.post("/v1/tasks/claim", json=body, headers=headers).json()
        )
    )
    waiting.start()
    return waiting


def tasks_bell(client: TestClient) -> tuple[float, float]:
    """The claims waiting on the tasks-offered bell now, and how many its rings woke."""
    return (
        metric(client, 'ecp_long_polls_waiting{bell="tasks_offered"}'),
        metric(client, 'ecp_long_poll_wakeups_total{bell="tasks_offered"}'),
    )


@pytest.mark.spec(KEYED)
def test_a_waiting_claim_hears_only_its_tenants_offers_from_another_process(fresh_database):
    """Process A holds a claim of TENANT; process B's dispatcher offers a task to another tenant,
    then to TENANT. A hears both offers; only the second wakes the claim, which takes it. The
    listener handles notifications in commit order, so a wake-up by the first would be counted
    before the second's: one wake-up in all means the first reached no claim.
    """
    app = create_app(settings(fresh_database), start_workers=False)
    with TestClient(app) as client, PostgresStore(fresh_database, max_size=4) as other:
        listener = app.state.runtime.listener
        listener.start()  # only the listener of A: its dispatcher stays stopped
        assert listener.wait_connected(30)
        ecp = Ecp.build(other.unit_of_work, signer=SIGNER)
        for tenant in (TENANT, "other tenant"):
            deploy_task(ecp, tenant)
        dispatcher = Dispatcher(ecp.runs, workers=1, poll_seconds=0.05)
        dispatcher.start()
        answers: list[dict[str, object]] = []
        try:
            waiting = waiting_claim(client, answers)
            wait_for(lambda: tasks_bell(client) == (1, 0))
            foreign = ecp.runs.start("other tenant", StartRunRequest(deployment_ref="d"))[0]
            heard = f'ecp_notifications_received_total{{channel="{TASKS_OFFERED}"}}'
            wait_for(lambda: metric(client, heard) >= 1)  # the foreign offer
            own = start(ecp)
            waiting.join(60)
        finally:
            dispatcher.stop()
        assert [task["run_id"] for task in answers[0]["tasks"]] == [own]  # type: ignore[index]
        assert tasks_bell(client) == (0, 1)
        assert ecp.runs.get("other tenant", foreign.run_id).status.value == "WAITING_TASK"


@pytest.mark.spec(KEYED)
def test_an_offer_of_this_process_rings_its_claims_once_with_the_listener_on(fresh_database):
    """The dispatcher leaves its offer to the notification: one ring, not one of each."""
    app = create_app(settings(fresh_database, dispatch_poll_seconds=0.05))
    with TestClient(app) as client:
        assert app.state.runtime.listener.wait_connected(30)
        with PostgresStore(fresh_database, max_size=4) as other:
            deploy_task(Ecp.build(other.unit_of_work, signer=SIGNER), TENANT)
        answers: list[dict[str, object]] = []
        waiting = waiting_claim(client, answers)
        wait_for(lambda: tasks_bell(client) == (1, 0))
        started = client.post("/runs", json={"deployment_ref": "d"}, headers=auth())
        assert started.status_code == 201
        waiting.join(60)
        run_id = started.json()["run_id"]
        assert [task["run_id"] for task in answers[0]["tasks"]] == [run_id]  # type: ignore[index]
        assert tasks_bell(client) == (0, 1)
        assert metric(client, f'ecp_notifications_received_total{{channel="{TASKS_OFFERED}"}}') >= 1


@pytest.mark.spec(KEYED)
def test_a_task_offered_wakes_one_waiting_claim_of_its_topic(fresh_database):
    """Three claims of TENANT wait for ``keyed.work`` and one for another topic. Another process
    offers one task: the notification wakes one claim of the topic, which takes the task, and no
    other; the claims still waiting find nothing until their deadline."""
    app = create_app(settings(fresh_database), start_workers=False)
    with TestClient(app) as client, PostgresStore(fresh_database, max_size=4) as other:
        listener = app.state.runtime.listener
        listener.start()  # only the listener of this process: its dispatcher stays stopped
        assert listener.wait_connected(30)
        ecp = Ecp.build(other.unit_of_work, signer=SIGNER)
        deploy_task(ecp, TENANT)
        dispatcher = Dispatcher(ecp.runs, workers=1, poll_seconds=0.05)
        dispatcher.start()
        answers: list[dict[str, object]] = []
        waiting = [waiting_claim(client, answers, seconds=8) for _ in range(3)]
        waiting.append(waiting_claim(client, answers, topic="other.work", seconds=8))
        try:
            wait_for(lambda: tasks_bell(client) == (4, 0))
            own = start(ecp)
            wait_for(lambda: len(answers) == 1)
            after_the_offer = tasks_bell(client)
        finally:  # the claims end by their deadline: the client may close only after them
            for thread in waiting:
                thread.join(60)
            dispatcher.stop()
        assert after_the_offer == (3, 1)
        taken = [[task["run_id"] for task in answer["tasks"]] for answer in answers]  # type: ignore[union-attr]
        assert taken == [[own], [], [], []]
        assert tasks_bell(client) == (0, 1)


@pytest.mark.spec(KEYED)
def test_the_task_offer_notification_names_tenant_and_topic(fresh_database):
    """Offered, and waiting again after a lock ran out; tenants and topics with spaces, quotes and
    characters beyond ASCII come back as they were. A task that waits for a later retry is quiet."""
    tenant, topic = 'acme "corp" Zoë', "bill pay/€ 1"
    columns = (
        "task_id, tenant_id, run_id, node_id, topic, status, arguments, state, attempt,"
        " max_attempts, lock_seconds, created_at, updated_at"
    )
    with heard_on(fresh_database, TASKS_OFFERED) as heard:
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            row = "%s, %s, 'r', 'n', %s, %s, '{}', '{}', 1, 3, 60, now(), now()"
            insert = f"INSERT INTO ecp_tasks ({columns}) VALUES ({row})"  # noqa: S608
            conn.execute(insert, ("t1", tenant, topic, "waiting"))
            conn.execute(insert, ("t2", tenant, topic, "locked"))  # held: not offered
            conn.execute("UPDATE ecp_tasks SET status = 'waiting' WHERE task_id = 't2'")
            conn.execute("UPDATE ecp_tasks SET status = 'locked' WHERE task_id = 't1'")
            conn.execute(
                "UPDATE ecp_tasks SET status = 'waiting', not_before = now() + interval '1 hour'"
                " WHERE task_id = 't1'"
            )
        wait_for(lambda: len(heard) >= 2)
        time.sleep(0.5)  # a third notification, were the delayed retry to send one, arrives
    assert [offered(payload) for payload in heard] == [TaskOffered(tenant, topic)] * 2


@pytest.mark.spec(KEYED)
def test_the_run_moved_notification_names_the_tenant(woken, fresh_database):
    ecp, _, _ = woken
    with heard_on(fresh_database, RUNS_MOVED) as heard:
        run_id = start(ecp)
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            conn.execute("UPDATE ecp_runs SET status = 'WAITING_TASK' WHERE run_id = %s", (run_id,))
        wait_for(lambda: heard)
    assert [moved(payload) for payload in heard] == [RunMoved("WAITING_TASK", run_id, TENANT)]


@pytest.mark.spec("C8 notify-wakeups")
def test_a_queued_delivery_wakes_a_sender_that_polls_every_ten_minutes(fresh_database):
    with receiver() as hook:
        app = create_app(
            settings(
                fresh_database,
                webhook_poll_seconds=TEN_MINUTES,
                dispatch_poll_seconds=TEN_MINUTES,
                escalation_interval_seconds=TEN_MINUTES,
            )
        )
        with TestClient(app) as client, PostgresStore(fresh_database, max_size=4) as other:
            assert app.state.runtime.listener.wait_connected(30)
            ecp = deployed(other)
            subscription = {
                "deployment_ref": "d",
                "target_url": hook.url,
                "event_types": ["run.completed"],
            }
            made = client.post("/webhooks/subscriptions", json=subscription, headers=auth())
            assert made.status_code == 201
            for count in (1, 2):
                run_id = start(ecp)  # through another store: only notifications reach the server
                wait_for(lambda count=count: len(hook.received) >= count)
                assert completed(ecp, run_id)


@pytest.mark.spec("C8 notify-wakeups")
def test_a_session_with_ecp_notify_off_notifies_nothing(woken, fresh_database):
    ecp, _, _ = woken
    with heard_on(fresh_database, RUNS_MOVED) as heard:
        quiet, loud = start(ecp), start(ecp)
        for run_id, options in ((quiet, "-c ecp.notify=off"), (loud, "")):
            with psycopg.connect(fresh_database, autocommit=True, options=options) as conn:
                conn.execute(
                    "UPDATE ecp_runs SET status = 'WAITING_INTERRUPT' WHERE run_id = %s", (run_id,)
                )
        wait_for(lambda: heard)
    assert heard == [f"WAITING_INTERRUPT {loud} {TENANT}"]
