"""Poison runs on PostgreSQL with the real dispatcher: counted, backed off, ended; others move on.

A poison run is one whose stored data makes every dispatch raise, written the way an older
release left it: a jsonb state nested deeper than Python's recursion limit, which the JSON
reader refuses with RecursionError. Its state is never read again, not even to fail it.
"""

import logging
import time

import psycopg
import pytest
from psycopg.rows import dict_row
from tests.support.runs import deploy_three_steps

from ecp_core import (
    ActionRegistry,
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule
from ecp_core.webhooks.model import WebhookEventType
from ecp_http.background.dispatch import Dispatcher
from ecp_postgres import PostgresStore

pytestmark = [pytest.mark.integration, pytest.mark.spec("C8 poison-runs")]

SIGNER = Ed25519Signer(bytes(range(9, 41)), key_id="poison")
MAX_ATTEMPTS = 3
POLICY = RetrySchedule(max_attempts=MAX_ATTEMPTS, base_seconds=0.01, max_seconds=0.05)
DEEP_STATE = '{"x": ' + "[" * 2000 + "]" * 2000 + "}"
TENANTS = ("t1", "t2")


def deployed(store):
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER, dispatch_retry=POLICY)
    deploy_three_steps(ecp, *TENANTS)
    for tenant in TENANTS:
        admin = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id=tenant)
        ecp.webhooks.subscribe(
            admin,
            CreateSubscriptionRequest(
                deployment_ref="d",
                target_url="http://127.0.0.1:9/hook",
                event_types=(WebhookEventType.RUN_FAILED, WebhookEventType.RUN_COMPLETED),
            ),
        )
    return ecp


def rows(url, sql, params=()):
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return conn.execute(sql, params).fetchall()


def poison(url, run_ids):
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE ecp_runs SET state = %s::jsonb WHERE run_id = ANY(%s)",
            (DEEP_STATE, list(run_ids)),
        )


def wait_for(condition, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def statuses(url):
    return {r["run_id"]: r["status"] for r in rows(url, "SELECT run_id, status FROM ecp_runs")}


def test_poison_runs_fail_after_their_attempts_and_good_runs_complete(fresh_database, caplog):
    caplog.set_level(logging.WARNING, logger="ecp_core.runs")
    with PostgresStore(fresh_database) as store:
        ecp = deployed(store)
        start = lambda tenant: ecp.runs.start(tenant, StartRunRequest(deployment_ref="d"))[0]  # noqa: E731
        # The poison runs are the oldest of each tenant: first in line at every claim.
        bad = {tenant: [start(tenant).run_id for _ in range(5)] for tenant in TENANTS}
        good = {tenant: [start(tenant).run_id for _ in range(50)] for tenant in TENANTS}
        poisoned = [run_id for ids in bad.values() for run_id in ids]
        poison(fresh_database, poisoned)
        dispatcher = Dispatcher(ecp.runs, workers=2, poll_seconds=0.02)
        dispatcher.start()
        try:
            wait_for(lambda: set(statuses(fresh_database).values()) <= {"COMPLETED", "FAILED"})
        finally:
            dispatcher.stop()

        found = {
            r["run_id"]: r
            for r in rows(
                fresh_database,
                "SELECT run_id, status, failure_state, dispatch_failures, state = %s::jsonb AS intact"
                " FROM ecp_runs",
                (DEEP_STATE,),
            )
        }
        for tenant in TENANTS:
            for run_id in good[tenant]:
                assert found[run_id]["status"] == "COMPLETED"
                assert ecp.runs.get(tenant, run_id).output == {"a": 1}
            for run_id in bad[tenant]:
                row = found[run_id]
                assert row["status"] == "FAILED"
                assert row["failure_state"]["reason"] == "dispatch_error"
                assert "RecursionError" in row["failure_state"]["message"]
                assert row["dispatch_failures"] == MAX_ATTEMPTS
                assert row["intact"], "failing the run must leave its stored state alone"
                with store.unit_of_work() as uow:
                    (record,) = uow.audit.for_run(tenant, run_id)
                assert record.status.value == "failed"
                assert record.node_id == "a"
                assert record.error["type"] == "RecursionError"
                assert record.execution_metadata == {"dispatch_attempts": MAX_ATTEMPTS}
                assert record.input_snapshot is None and record.output_snapshot is None
            assert ecp.audit.verify_deployment(tenant, "d").verified

        # Exactly MAX_ATTEMPTS dispatches of each poison run raised, each logged once.
        failed_dispatches = [
            r.run_id
            for r in caplog.records
            if r.name == "ecp_core.runs" and r.getMessage() == "run dispatch failed"
        ]
        assert sorted(failed_dispatches) == sorted(poisoned * MAX_ATTEMPTS)

        events = rows(
            fresh_database,
            "SELECT event_type, payload->'data'->>'run_id' AS run_id,"
            " payload->'data'->'failure_state'->>'reason' AS reason"
            " FROM ecp_webhook_deliveries",
        )
        failed_events = sorted(
            (e["run_id"], e["reason"]) for e in events if e["event_type"] == "run.failed"
        )
        assert failed_events == sorted((run_id, "dispatch_error") for run_id in poisoned)
        completed = [e["run_id"] for e in events if e["event_type"] == "run.completed"]
        assert sorted(completed) == sorted(run_id for ids in good.values() for run_id in ids)


def test_failure_counts_survive_a_restart_and_a_success_resets_them(fresh_database):
    with PostgresStore(fresh_database) as store:
        ecp = deployed(store)
        run = ecp.runs.start("t1", StartRunRequest(deployment_ref="d"))[0]
        poison(fresh_database, [run.run_id])
        assert ecp.runs.advance_next().status.value == "PENDING"  # the header; state unread
    # A new process (store and services) picks up the count where the last one left it.
    with PostgresStore(fresh_database) as store:
        ecp = Ecp.build(store.unit_of_work, signer=SIGNER, dispatch_retry=POLICY)
        wait_for(lambda: ecp.runs.advance_next() is not None, 5)
        (row,) = rows(fresh_database, "SELECT dispatch_failures FROM ecp_runs")
        assert row["dispatch_failures"] == 2
        # The data is repaired before the last attempt: the next dispatch goes through.
        with psycopg.connect(fresh_database) as conn:
            conn.execute("UPDATE ecp_runs SET state = '{}'::jsonb")
        wait_for(lambda: ecp.runs.advance_next() is not None, 5)
        (row,) = rows(
            fresh_database, "SELECT status, dispatch_failures, dispatch_not_before FROM ecp_runs"
        )
        # One claim runs the steps without side effects to the end (ADR 0059).
        assert (row["status"], row["dispatch_failures"], row["dispatch_not_before"]) == (
            "COMPLETED",
            0,
            None,
        )
        assert ecp.runs.drive("t1", run.run_id).status.value == "COMPLETED"


def test_a_connection_lost_mid_attempt_backs_off_without_counting(fresh_database):
    """The database failing under an attempt is not the run's fault: no dispatch_error, ever."""
    killed = []

    def cut_the_line(context):
        if not killed:  # once: every other session of the database is terminated mid-attempt
            with psycopg.connect(fresh_database, autocommit=True) as conn:
                killed.extend(
                    conn.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    ).fetchall()
                )
        return {"done": True}

    actions = ActionRegistry()
    actions.register("cut", cut_the_line)
    with PostgresStore(fresh_database) as store:
        ecp = Ecp.build(store.unit_of_work, signer=SIGNER, dispatch_retry=POLICY, actions=actions)
        graph = GraphBuilder("cut").action("a", "cut").end("z").chain("a", "z").build()
        ecp.graphs.register("t1", graph)
        ecp.graphs.deploy("t1", CreateDeploymentRequest(deployment_ref="cut", graph_id="cut"))
        run, _ = ecp.runs.start("t1", StartRunRequest(deployment_ref="cut"))
        header = ecp.runs.advance_next()
        assert killed and header is not None and header.run_id == run.run_id
        [row] = rows(
            fresh_database,
            "SELECT dispatch_failures, dispatch_not_before FROM ecp_runs WHERE run_id = %s",
            (run.run_id,),
        )
        assert row["dispatch_failures"] == 0 and row["dispatch_not_before"] is not None
        deadline = time.monotonic() + 30
        while ecp.runs.get("t1", run.run_id).status.value != "COMPLETED":
            assert time.monotonic() < deadline, "the run never completed after the outage"
            ecp.runs.advance_next() or time.sleep(0.02)
        assert ecp.audit.verify_run("t1", run.run_id).verified
