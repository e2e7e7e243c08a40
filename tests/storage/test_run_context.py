"""What a unit of work remembers of a run's context is what a fresh read would return.

A run's lock and a deployment's read join the tenant's audit settings, the deployment's policy
and whether it has live webhook subscriptions, and the transaction remembers them
(``ecp_postgres.run_context``, ADRs 0059 and 0067). Whatever the mix of reads, changes, runs added
and locked and commits, each answer in a unit of work equals the answer of a plain connection,
which remembers nothing and reads every time.
"""

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row
from tests.support.statements import statements

from ecp_core.audit.settings import AuditSettings
from ecp_core.testing.samples import NOW, deployment, policy, run
from ecp_core.webhooks.model import WebhookEventType, WebhookSubscription
from ecp_postgres import PostgresStore
from ecp_postgres.audit import PostgresAudit
from ecp_postgres.deployments import PostgresDeployments
from ecp_postgres.policies import PostgresPolicies
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.webhooks import PostgresWebhooks

pytestmark = pytest.mark.integration

TABLES = (
    "ecp_runs",
    "ecp_deployments",
    "ecp_policies",
    "ecp_audit_settings",
    "ecp_webhook_subscriptions",
)
STORED_RUNS = ("r1", "r2")
NEW_RUNS = ("r3", "r4")
SUBSCRIPTIONS = ("s1", "s2")

operations = st.lists(
    st.one_of(
        st.tuples(st.just("deployment"), st.none()),
        st.tuples(st.just("policy"), st.integers(1, 3)),
        st.tuples(st.just("settings"), st.sampled_from([2, 3])),
        st.tuples(st.just("subscribe"), st.sampled_from(SUBSCRIPTIONS)),
        st.tuples(st.just("unsubscribe"), st.sampled_from(SUBSCRIPTIONS)),
        st.tuples(st.just("add_run"), st.sampled_from(NEW_RUNS)),
        st.tuples(st.just("lock"), st.sampled_from(STORED_RUNS + NEW_RUNS)),
        st.tuples(st.just("context"), st.none()),
        st.tuples(st.just("commit"), st.none()),
    ),
    max_size=25,
)


def subscription(subscription_id: str) -> WebhookSubscription:
    return WebhookSubscription(
        subscription_id=subscription_id,
        tenant_id="t1",
        deployment_ref="dep",
        target_url="https://hooks.example.com/ecp",
        event_types=(WebhookEventType.RUN_COMPLETED,),
        secret="whsec_" + "k" * 40,
        created_at=NOW,
    )


def apply(conn, ops) -> list:
    """Play ``ops`` on ``conn``; every read's answer, in order."""
    runs, deployments = PostgresRuns(conn), PostgresDeployments(conn)
    policies, audit, webhooks = PostgresPolicies(conn), PostgresAudit(conn), PostgresWebhooks(conn)
    answers: list = []
    runs_added: set[str] = set()
    for op, value in ops:
        if op == "deployment":
            answers.append(deployments.get("t1", "dep"))
        elif op == "policy":
            policies.put(policy(version=value))
        elif op == "settings":
            audit.save_settings(
                AuditSettings(tenant_id="t1", digest_version=value, updated_at=NOW, updated_by="o")
            )
        elif op == "subscribe" and webhooks.subscription("t1", value) is None:
            webhooks.add_subscription(subscription(value))
        elif op == "unsubscribe":
            webhooks.delete_subscription("t1", value)
        elif op == "add_run" and value not in runs_added:
            runs.add(run(value))
            runs_added.add(value)
        elif op == "lock" and (value in STORED_RUNS or value in runs_added):
            answers.append(runs.lock("t1", value))
        elif op == "context":
            answers.append(
                (
                    policies.get("t1", "dep"),
                    audit.settings("t1"),
                    [s.subscription_id for s in webhooks.live_for("t1", "dep")],
                )
            )
        elif op == "commit":
            conn.commit()
            runs_added.clear()  # committed: a second add of the id is a Conflict, not played
            runs_added.update(r for r in NEW_RUNS if runs.get("t1", r) is not None)
    conn.commit()
    return answers


def reset(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("TRUNCATE " + ", ".join(TABLES))
        PostgresDeployments(conn).add(deployment())
        for run_id in STORED_RUNS:
            PostgresRuns(conn).add(run(run_id))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations)
def test_what_a_unit_of_work_remembers_is_what_a_fresh_read_returns(two_databases, ops):
    unit_url, plain_url = two_databases
    for url in two_databases:
        reset(url)
    with PostgresStore(unit_url, max_size=1) as store, store.unit_of_work() as uow:
        remembered = apply(uow._conn, ops)  # the unit of work's own (remembering) connection
    with psycopg.connect(plain_url, row_factory=dict_row) as conn:
        read = apply(conn, ops)
    assert remembered == read


def test_a_run_added_after_its_deployment_s_read_is_locked_without_a_statement(postgres_store):
    """A start reads the deployment, then adds and attempts its run: the deployment's read joined
    all the run's lock would read, so the lock and the attempt's reads send nothing (ADR 0067)."""
    with postgres_store.unit_of_work() as uow:
        uow.deployments.add(deployment())
        uow.policies.put(policy())
        uow.commit()
    with postgres_store.unit_of_work() as uow:
        with statements() as seen:
            assert uow.deployments.get("t1", "dep") == deployment()
            uow.runs.add(run("r9"))
            assert uow.runs.lock("t1", "r9") == run("r9")
            assert uow.policies.get("t1", "dep") == policy()
            assert uow.audit.settings("t1") is None
            assert uow.webhooks.live_for("t1", "dep") == []
            assert uow.audit.head("r9") is None
        assert len(seen) == 1, seen  # the deployment's read; the run's insert still waits
        uow.commit()
    with postgres_store.unit_of_work() as uow:
        assert uow.runs.get("t1", "r9") == run("r9")
