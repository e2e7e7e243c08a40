"""The statements a request or a background step sends find their rows by index (ADR 0068).

Several id columns are ``COLLATE "C"`` and others use the database's default collation; a
comparison, join or ORDER BY under a collation other than an index's cannot use that index, and
PostgreSQL then scans the table whole, or reads and sorts all of a tenant's or a deployment's rows
to return one page. Each case calls the adapter's own method on a connection that EXPLAINs every
statement it sends (and runs none), over a few thousand rows, with sequential scans switched off:
the planner still takes one only where no index can answer. A case marked ``ORDERED`` is a page,
a claim or a sweep whose order an index gives: a ``Sort`` node in its plan (an ``Incremental
Sort`` over an index's leading key is fine) means every call sorts the whole set it selects from.
``tests/storage/test_lock_plans.py`` holds the run's lock the same way.
"""

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from ecp_core.errors import EcpError
from ecp_core.types import ApprovalStatus
from ecp_postgres import create_database, drop_database
from ecp_postgres.approvals import PostgresApprovals
from ecp_postgres.audit import PostgresAudit
from ecp_postgres.backtests import PostgresBacktests
from ecp_postgres.connectors import PostgresConnectorCosts
from ecp_postgres.retention import PostgresRetention
from ecp_postgres.runs import _TENANTS, PostgresRuns
from ecp_postgres.tasks import PostgresTasks
from ecp_postgres.webhooks import PostgresWebhooks

pytestmark = pytest.mark.integration

NOW = datetime(2026, 6, 1, tzinfo=UTC)

# Four tenants of 1,000 runs in one deployment each, five audit records a run, and a row or so a
# run in each other table read here; timestamps all differ, as they do in use.
ROWS = """
INSERT INTO ecp_runs (run_id, tenant_id, deployment_ref, graph_version_ref, thread_id, status,
    state, steps, attempts, pending_approval_ids, created_at, updated_at, dispatch_claim,
    parent_run_id, ancestor_run_ids)
SELECT 'run-' || lpad(i::text, 6, '0'), 't' || (i % 4), 'dep', 'g@1', 'th',
    CASE WHEN i % 10 = 0 THEN 'PENDING' ELSE 'COMPLETED' END, '{}', 1, 1, '[]',
    :now - i * interval '1 minute', :now - interval '100 days' - i * interval '1 minute',
    CASE WHEN i % 7 = 0 THEN i END, CASE WHEN i % 3 = 0 THEN 'run-000003' END, '[]'
FROM generate_series(1, 4000) i;
INSERT INTO ecp_audit_records (audit_id, tenant_id, run_id, deployment_ref, graph_version_ref,
    node_id, attempt, status, created_at, digest_version, record_digest)
SELECT 'au-' || r.run_id || '-' || a, r.tenant_id, r.run_id, r.deployment_ref, 'g@1', 'n', a,
    'ok', r.updated_at + a * interval '1 second', 2, 'd'
FROM ecp_runs r, generate_series(1, 5) a;
INSERT INTO ecp_audit_heads (run_id, attempt, record_digest) SELECT run_id, 5, 'd' FROM ecp_runs;
INSERT INTO ecp_approvals (approval_id, tenant_id, run_id, node_id, graph_version_ref,
    deployment_ref, summary, rationale, status, interaction_type, requested_decision,
    allowed_actions, context_excerpt, urgency_metadata, created_at, updated_at, sla_deadline)
SELECT 'ap-' || run_id, tenant_id, run_id, 'n', 'g@1', deployment_ref, 's', 'r',
    CASE WHEN status = 'PENDING' THEN 'pending' ELSE 'resolved' END, 'x', 'x', '[]', '{}', '{}',
    created_at, created_at, created_at + interval '1 day'
FROM ecp_runs;
INSERT INTO ecp_tasks (task_id, tenant_id, run_id, node_id, topic, arguments, state, status,
    attempt, max_attempts, lock_seconds, created_at, updated_at, locked_until)
SELECT 'task-' || run_id, tenant_id, run_id, 'n', 'topic-' || (substr(run_id, 5)::int % 3),
    '{}', '{}', CASE right(run_id, 1) WHEN '0' THEN 'waiting' WHEN '1' THEN 'locked'
    ELSE 'completed' END, 1, 3, 30, created_at, created_at, created_at + interval '30 seconds'
FROM ecp_runs;
INSERT INTO ecp_webhook_subscriptions (subscription_id, tenant_id, deployment_ref, target_url,
    event_types, secret, created_at)
SELECT 'sub-' || i, 't' || (i % 4), 'dep-' || i, 'https://x', '[]', 's',
    :now - i * interval '1 minute'
FROM generate_series(1, 400) i;
INSERT INTO ecp_webhook_deliveries (delivery_id, tenant_id, subscription_id, event_id, event_type,
    payload, status, attempts, next_attempt_at, created_at, updated_at)
SELECT 'del-' || lpad(i::text, 6, '0'), 't' || (i % 4), 'sub-1', 'ev', 'run.completed', '{}',
    CASE i % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'delivered' ELSE 'dead' END, 1,
    :now - i * interval '1 minute', :now - i * interval '1 minute',
    :now - i * interval '1 minute'
FROM generate_series(1, 4000) i;
INSERT INTO ecp_webhook_attempts (delivery_id, attempt, occurred_at, status_code)
SELECT delivery_id, 1, updated_at, 200 FROM ecp_webhook_deliveries;
INSERT INTO ecp_backtests (backtest_id, tenant_id, request_digest, status, created_at, calls,
    record, deadline_at)
SELECT 'bt-' || lpad(i::text, 6, '0'), 't' || (i % 4), 'digest-' || i,
    CASE WHEN i % 100 = 0 THEN 'queued' ELSE 'finished' END, :now - i * interval '1 minute',
    1, '{}', :now
FROM generate_series(1, 4000) i;
INSERT INTO ecp_backtest_inputs (backtest_id, key_id, sealed)
SELECT backtest_id, 'k', '\\x00' FROM ecp_backtests;
INSERT INTO ecp_connector_cost_scopes (tenant_id, campaign_id, run_key)
SELECT 't' || (i % 4), 'c' || i, 'rk' || i FROM generate_series(1, 4000) i;
INSERT INTO ecp_connector_tests (tenant_id, campaign_id, operation_id, record, run_key, reserved_at)
SELECT 't' || (i % 4), 'c' || i, 'op', '{}', 'rk' || i,
    CASE WHEN i % 100 = 0 THEN :now - i * interval '1 minute' END
FROM generate_series(1, 4000) i;
INSERT INTO ecp_connector_costs (tenant_id, cost_event_id, campaign_id, run_key, amount_usd, record)
SELECT 't1', 'ce-' || lpad(i::text, 6, '0'), 'c1', 'rk1', 1, '{}' FROM generate_series(1, 4000) i;
INSERT INTO ecp_legal_holds (hold_id, tenant_id, reason, created_at, created_by, run_id,
    released_at)
SELECT 'hold-' || i, 't' || (i % 4), 'r', :now - i * interval '1 minute', 'me',
    'run-' || lpad((i * 37)::text, 6, '0'), CASE WHEN i % 2 = 0 THEN :now END
FROM generate_series(1, 100) i;
INSERT INTO ecp_retention_audit_log (entry_id, tenant_id, step, status, newly_erased, reason,
    trigger, occurred_at, detail)
SELECT 'entry-' || lpad(i::text, 6, '0'), 't' || (i % 4), 'runs', 'ok', 1, 'ttl', 'sweep',
    :now, '{}'
FROM generate_series(1, 4000) i;
"""

_EXPLAINABLE = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE")


class _NoRows:
    """What an explained statement answers: no row."""

    rowcount = 0

    def fetchone(self) -> None:
        return None

    def fetchall(self) -> list[Any]:
        return []


class _Explaining:
    """A connection that EXPLAINs each statement a repository sends through it and runs none."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.plans: list[tuple[str, str]] = []

    def execute(self, query: str, params: Any = None, **_: Any) -> _NoRows:
        if query.lstrip().split(None, 1)[0].upper() in _EXPLAINABLE:
            rows = self._conn.execute(f"EXPLAIN {query}", params).fetchall()
            self.plans.append((query, "\n".join(row[0] for row in rows)))
        return _NoRows()

    def cursor(self, *_: Any, **__: Any) -> "_Explaining":
        return self


ORDERED = "ordered"
Call = Callable[[Any], object]
CASES: dict[str, tuple[Call, str | None]] = {
    # audit: a deployment's pages by run id (code point) then attempt, chains, the TTL sweep
    "audit deployment first page": (
        lambda c: PostgresAudit(c).for_deployment("t1", "dep", limit=50),
        ORDERED,
    ),
    "audit deployment next page": (
        lambda c: PostgresAudit(c).for_deployment("t1", "dep", limit=50, after=("run-000401", 3)),
        ORDERED,
    ),
    "audit deployment page of one run": (
        lambda c: PostgresAudit(c).for_deployment("t1", "dep", "run-000401", limit=50),
        None,
    ),
    "audit chain run ids": (lambda c: PostgresAudit(c).chain_run_ids("t1", "dep"), None),
    "audit chains": (
        lambda c: PostgresAudit(c).chains("t1", ["run-000401", "run-000405"]),
        None,
    ),
    "audit records of a run": (lambda c: PostgresAudit(c).for_run("t1", "run-000401"), None),
    "audit head": (lambda c: PostgresAudit(c).head("run-000401"), None),
    "audit aged": (lambda c: PostgresAudit(c).aged("t1", NOW, 50), ORDERED),
    # runs
    "runs page": (lambda c: PostgresRuns(c).page("t1", limit=50, before="run-002001"), ORDERED),
    "runs children": (
        lambda c: PostgresRuns(c).children("t1", "run-000003", limit=50, after="run-000101"),
        ORDERED,
    ),
    "runs expired": (lambda c: PostgresRuns(c).expired("t1", NOW, 50), ORDERED),
    "runs lock header": (lambda c: PostgresRuns(c).lock_header("t1", "run-000401"), None),
    "runs of a deployment paused": (
        lambda c: PostgresRuns(c).pause_deployment_runs("t1", "dep", paused=True),
        None,
    ),
    "runs dispatch failure": (
        lambda c: PostgresRuns(c).clear_dispatch_failures("t1", "run-000401"),
        None,
    ),
    # approvals
    "approvals page": (
        lambda c: PostgresApprovals(c).page("t1", limit=50, after="ap-run-000401"),
        ORDERED,
    ),
    "approvals page by status": (
        lambda c: PostgresApprovals(c).page("t1", limit=50, status=ApprovalStatus.RESOLVED),
        ORDERED,
    ),
    "approvals page by deployment": (
        lambda c: PostgresApprovals(c).page("t1", limit=50, deployment_ref="dep"),
        ORDERED,
    ),
    "approvals of a run": (lambda c: PostgresApprovals(c).for_run("t1", "run-000401"), None),
    "approvals overdue": (lambda c: PostgresApprovals(c).overdue(NOW, 50), ORDERED),
    "approval trail": (lambda c: PostgresApprovals(c).actions("t1", "ap-run-000401"), None),
    # tasks (one topic in ecp_tasks_open's order; several in ecp_tasks_open_by_age's, filtered)
    "tasks claim": (
        lambda c: PostgresTasks(c).claim(
            "t1", ["topic-1", "topic-2"], worker_id="w", now=NOW, lock_seconds=None, limit=10
        ),
        ORDERED,
    ),
    "tasks claim of one topic": (
        lambda c: PostgresTasks(c).claim(
            "t1", ["topic-1"], worker_id="w", now=NOW, lock_seconds=None, limit=10
        ),
        ORDERED,
    ),
    "tasks expired locks": (lambda c: PostgresTasks(c)._expired(None, None, NOW, 10), ORDERED),
    "tasks page": (
        lambda c: PostgresTasks(c).page("t1", limit=50, after="task-run-000401"),
        ORDERED,
    ),
    "task held": (lambda c: PostgresTasks(c)._held("t1", "task-run-000401"), None),
    # webhooks
    "webhooks claim due": (lambda c: PostgresWebhooks(c).claim_due(NOW, 10), ORDERED),
    "webhook attempts": (lambda c: PostgresWebhooks(c).attempts("t1", "del-000401"), None),
    "webhook dead letters": (
        lambda c: PostgresWebhooks(c).dead_letters("t1", limit=50),
        ORDERED,
    ),
    "webhook counts": (
        lambda c: PostgresWebhooks(c).delivery_counts("t1", NOW - timedelta(days=1)),
        None,
    ),
    "webhook subscriptions of a deployment": (
        lambda c: PostgresWebhooks(c).live_for("t1", "dep-1"),
        None,
    ),
    # backtests
    "backtests claim": (lambda c: PostgresBacktests(c).claim(NOW), ORDERED),
    "backtests page": (
        lambda c: PostgresBacktests(c).page("t1", limit=20, before=(NOW, "bt-000400")),
        ORDERED,
    ),
    # connectors
    "connector tests abandoned": (
        lambda c: PostgresConnectorCosts(c).claim_abandoned(NOW, 10),
        ORDERED,
    ),
    "connector ledger page": (
        lambda c: PostgresConnectorCosts(c).entries("t1", "c1", None, limit=50, after="ce-000100"),
        ORDERED,
    ),
    # retention
    "retention holds": (lambda c: PostgresRetention(c).holds("t1", active_only=True), None),
    "retention log": (lambda c: PostgresRetention(c).log("t1", limit=50), ORDERED),
}


@pytest.fixture(scope="module")
def populated(postgres_url, migrated_template) -> Iterator[str]:
    """URL of a migrated database holding :data:`ROWS`, analyzed."""
    name = f"ecp_test_plans_{os.getpid()}"
    url = create_database(postgres_url, name, template=migrated_template)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(ROWS.replace(":now", f"TIMESTAMPTZ '{NOW.isoformat()}'"))
        conn.execute("ANALYZE")
    yield url
    drop_database(postgres_url, name)


def _sorts(plan: str) -> list[str]:
    """The plan's ``Sort`` nodes (not ``Incremental Sort``)."""
    return [line for line in plan.splitlines() if re.match(r"\s*(->\s+)?Sort  \(", line)]


@pytest.mark.parametrize("name", list(CASES))
def test_each_statement_reads_by_index(populated, name):
    call, order = CASES[name]
    with psycopg.connect(populated) as conn:
        conn.execute("SET enable_seqscan = off")
        if order == ORDERED:  # a Sort left in the plan then means no index gives the order
            conn.execute("SET enable_sort = off")
        explaining = _Explaining(conn)
        # a read that finds no row may refuse (NotFound) or assert: its statements are explained
        with contextlib.suppress(EcpError, AssertionError):
            call(explaining)
    assert explaining.plans, "no statement sent"
    for sql, plan in explaining.plans:
        assert "Seq Scan" not in plan, f"{sql}\n{plan}"
        if order == ORDERED:
            assert not _sorts(plan), f"{sql}\n{plan}"


def _claim_statements(source: str) -> tuple[str, str]:
    """The claim function's two statements: its candidates, and the lock of one of them."""
    candidates = source[source.index("FOR candidate IN") + len("FOR candidate IN") :]
    candidates = candidates[: candidates.index("\n    LOOP")]
    lock = source[source.index("RETURN QUERY") + len("RETURN QUERY") :]
    lock = lock[: lock.index(";")].replace("candidate.run_id", "$3")
    lock = lock.replace("candidate.limited", "$4")
    return candidates, lock


@pytest.mark.parametrize("statement", [0, 1], ids=["candidates", "lock"])
def test_the_run_claim_reads_by_index(populated, statement):
    """The claim's statements, as the function ``ecp_claim_runnable`` plans them (generic)."""
    with psycopg.connect(populated) as conn:
        (source,) = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'ecp_claim_runnable'"
        ).fetchone()
        body = _claim_statements(source)[statement]
        body = re.sub(r"\bbudget\b", "$2", re.sub(r"\bclaim_now\b", "$1", body))
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE claim (timestamptz, integer, text, boolean) AS {body}")
        rows = conn.execute(
            f"EXPLAIN EXECUTE claim ('{NOW.isoformat()}', 32, 'run-1', false)"
        ).fetchall()
    plan = "\n".join(row[0] for row in rows)
    assert "Seq Scan" not in plan, plan
    # The candidates: runs nobody paused (ADR 0076); the lock: one run by its key.
    assert ("ecp_runs_dispatchable" if statement == 0 else "ecp_runs_pkey") in plan, plan
    assert "ecp_runs_live_by_deployment" not in plan, plan


def test_the_tenants_of_the_retention_sweep_are_read_one_probe_each(populated):
    """``PostgresRuns.tenants`` reads a few index entries per tenant, not one per run (4,000)."""
    with psycopg.connect(populated, row_factory=dict_row) as conn:
        assert PostgresRuns(conn).tenants() == ["t0", "t1", "t2", "t3"]
        conn.execute("SET enable_seqscan = off")
        (plan,) = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {_TENANTS}").fetchone()[
            "QUERY PLAN"
        ]

    def rows_read(node: dict[str, Any]) -> int:
        own = node["Actual Rows"] * node["Actual Loops"] if "Relation Name" in node else 0
        return own + sum(rows_read(child) for child in node.get("Plans", []))

    assert rows_read(plan["Plan"]) <= 10, plan
