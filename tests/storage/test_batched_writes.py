"""The unit of work's batched writes (ADR 0059): the same rows as writing each at once.

A unit of work on PostgreSQL queues the run path's writes and sends them as one statement at the
next statement or with the commit. Whatever the mix of writes and reads, the tables end exactly
as they do when each write is executed at once (a plain connection, the reference), and a write
that must affect one row and affects none refuses the whole transaction with its own error.
"""

import contextlib

import attrs
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row

from ecp_core.audit.record import ChainHead
from ecp_core.errors import ChainConflict, NotFound
from ecp_core.testing.samples import NOW, approval, approval_action, run
from ecp_core.testing.strategies.audit import build_chain
from ecp_core.types import ApprovalStatus, RunStatus
from ecp_postgres import PostgresStore
from ecp_postgres.approvals import PostgresApprovals
from ecp_postgres.audit import PostgresAudit
from ecp_postgres.runs import PostgresRuns
from ecp_postgres.session import MAX_WRITES, UnitConnection

pytestmark = pytest.mark.integration

RUNS = ("r1", "r2")
NEW_RUNS = ("r3", "r4")
APPROVALS = ("a1", "a2")
TABLES = {
    "ecp_runs": "run_id",
    "ecp_approvals": "approval_id",
    "ecp_approval_actions": "approval_id, sequence",
    "ecp_audit_records": "audit_id",
    "ecp_audit_heads": "run_id",
}
CHAIN, _ = build_chain([{"input_snapshot": {"n": n}} for n in range(4)], run_id="r1")

operations = st.lists(
    st.one_of(
        st.tuples(st.just("save_run"), st.sampled_from(RUNS), st.integers(0, 3)),
        st.tuples(st.just("add_approval"), st.sampled_from(APPROVALS), st.sampled_from(RUNS)),
        st.tuples(st.just("resolve_approval"), st.sampled_from(APPROVALS), st.none()),
        st.tuples(st.just("action"), st.sampled_from(APPROVALS), st.integers(0, 99)),
        st.tuples(st.just("append"), st.none(), st.none()),
        st.tuples(st.just("read"), st.sampled_from(RUNS), st.none()),
        st.tuples(st.just("add_run"), st.sampled_from(NEW_RUNS), st.none()),
        st.tuples(st.just("lock"), st.sampled_from(RUNS + NEW_RUNS), st.none()),
        st.tuples(st.just("save_run"), st.sampled_from(NEW_RUNS), st.integers(0, 3)),
        st.tuples(st.just("commit"), st.none(), st.none()),
    ),
    max_size=25,
)


def apply(conn, ops) -> list:
    """Play ``ops`` through the repositories on ``conn`` (batching or plain alike).

    Returns what each lock read.
    """
    locked = []
    runs, approvals, audit = PostgresRuns(conn), PostgresApprovals(conn), PostgresAudit(conn)
    added: set[str] = set()
    runs_added: set[str] = set()
    appended = 0
    for op, key, value in ops:
        if op == "save_run" and (key in RUNS or key in runs_added):
            runs.save(attrs.evolve(run(key), steps=value, status=RunStatus.RUNNING))
        elif op == "add_run" and key not in runs_added:
            runs.add(run(key))
            runs_added.add(key)
        elif op == "lock" and (key in RUNS or key in runs_added):
            locked.append(runs.lock("t1", key))
        elif op == "add_approval" and key not in added:
            approvals.add(approval(key, run_id=value))
            added.add(key)
        elif op == "resolve_approval" and key in added:
            stored = approvals.get("t1", key)
            assert stored is not None
            approvals.save(attrs.evolve(stored, status=ApprovalStatus.RESOLVED, updated_at=NOW))
        elif op == "action" and key in added:
            approvals.add_action(attrs.evolve(approval_action(key), metadata={"n": value}))
        elif op == "append" and appended < len(CHAIN):
            previous = CHAIN[appended - 1] if appended else None
            assert audit.head("r1") == (
                None
                if previous is None
                else ChainHead(run_id="r1", attempt=appended, record_digest=previous.record_digest)
            )
            audit.append(CHAIN[appended])
            appended += 1
        elif op == "read":
            runs.get("t1", key)
        elif op == "commit":
            conn.commit()
    conn.commit()
    return locked


def contents(url: str) -> dict[str, list[dict]]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()  # noqa: S608
            for table, order in TABLES.items()
        }


def reset(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("TRUNCATE " + ", ".join(TABLES) + " RESTART IDENTITY CASCADE")
        for run_id in RUNS:
            PostgresRuns(conn).add(run(run_id))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations)
def test_batched_writes_leave_the_rows_writing_each_at_once_leaves(two_databases, ops):
    batched_url, plain_url = two_databases
    for url in two_databases:
        reset(url)
    with PostgresStore(batched_url, max_size=1) as store, store.unit_of_work() as uow:
        batched_locks = apply(uow._conn, ops)  # the unit of work's own (batching) connection
    with psycopg.connect(plain_url, row_factory=dict_row) as conn:
        plain_locks = apply(conn, ops)
    assert contents(batched_url) == contents(plain_url)
    assert batched_locks == plain_locks


def test_a_refused_write_refuses_the_whole_transaction(postgres_store):
    with postgres_store.unit_of_work() as uow:
        uow.runs.add(run("r1"))
        uow.commit()
    with pytest.raises(NotFound), postgres_store.unit_of_work() as uow:
        uow.approvals.add(approval("a1", run_id="r1"))
        uow.runs.save(run("missing"))  # affects no row: refused at commit, nothing committed
        uow.commit()
    with pytest.raises(ChainConflict), postgres_store.unit_of_work() as uow:
        uow.runs.save(attrs.evolve(run("r1"), steps=5))
        uow.audit.append(CHAIN[1])  # the chain is empty: the head cannot move from record 1
        uow.commit()
    with postgres_store.unit_of_work() as uow:
        assert uow.approvals.get("t1", "a1") is None
        assert uow.runs.get("t1", "r1") == run("r1")
        assert uow.audit.for_run("t1", "r1") == []


def test_a_lone_refused_write_raises_its_own_error(postgres_store):
    with pytest.raises(NotFound), postgres_store.unit_of_work() as uow:
        uow.runs.save(run("missing"))  # the batch's only write goes as itself
        uow.commit()


def test_going_on_after_a_refused_write_commits_nothing(postgres_store):
    """The refusal aborts the transaction in the database, not only in the caller's hands."""
    with postgres_store.unit_of_work() as uow:
        uow.runs.add(run("r1"))
        uow.commit()
    with postgres_store.unit_of_work() as uow:
        uow.approvals.add(approval("a1", run_id="r1"))
        uow.runs.save(run("missing"))
        with pytest.raises(NotFound):
            uow.runs.get("t1", "r1")  # the read sends the batch first: refused
        uow.approvals.add(approval("a2", run_id="r1"))
        with contextlib.suppress(psycopg.Error):
            uow.commit()
    with postgres_store.unit_of_work() as uow:
        assert uow.approvals.get("t1", "a1") is None
        assert uow.approvals.get("t1", "a2") is None


def test_a_long_transaction_sends_its_writes_in_statements_of_bounded_size(postgres_store):
    """400 appends in one transaction (1,200 writes) commit, in statements of bounded size."""
    chains = [
        build_chain([{"input_snapshot": {"n": n}}] * 4, run_id=f"r{n}", audit_prefix=f"r{n}-")[0]
        for n in range(100)
    ]
    sizes: list[int] = []
    flush = UnitConnection.flush

    def counted(self):
        sizes.append(len(self.pending))
        flush(self)

    UnitConnection.flush = counted
    try:
        with postgres_store.unit_of_work() as uow:
            for chain in chains:
                for record in chain:
                    uow.audit.append(record)
            uow.commit()
    finally:
        UnitConnection.flush = flush
    assert sizes and max(sizes) <= MAX_WRITES
    with postgres_store.unit_of_work() as uow:
        assert [r.attempt for r in uow.audit.for_run("t1", "r99")] == [1, 2, 3, 4]
        assert uow.audit.head("r99").record_digest == chains[-1][-1].record_digest
