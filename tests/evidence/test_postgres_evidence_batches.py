"""Evidence batches on PostgreSQL (COPY, or COPY to a staging table and merge) answer as memory.

For any sequence of batches mixing new events, exact replays (also inside one batch, also with
the amount spelt otherwise), changed replays and charge ids owned by another event, the
PostgreSQL store answers each batch as the memory store (the reference) does, a refused batch
leaves nothing behind, and at the end both hold exactly the same events with the same digests
(ADR 0060). The staging table is empty after every batch and does not carry a batch into the
next transaction. JSON bodies, whose rows are COPYed while later events are still being read,
answer and store as the memory store too: ids out of order, replays, and a broken later event
that abandons the COPY.
"""

import itertools
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.errors import Conflict, EcpError
from ecp_core.evidence.model import CostRole, Digested, ExecutionEvent
from ecp_core.evidence.rules import checked, execution_problems
from ecp_core.evidence.service import EvidenceService
from ecp_core.memory import MemoryStore
from ecp_core.memory.evidence import EXECUTIONS, EvidenceTables
from ecp_core.system import SystemClock
from ecp_core.testing.samples import NOW
from ecp_core.types import CostMeasurement
from ecp_postgres import PostgresStore
from ecp_postgres.evidence import execution_of

pytestmark = [pytest.mark.integration, pytest.mark.spec("C6 evidence-ingestion")]

_tenants = itertools.count()


@st.composite
def events(draw: st.DrawFn) -> ExecutionEvent:
    """Few ids, few charge ids and few contents: replays, changes and collisions are common."""
    event_id = draw(st.sampled_from(["a", "b", "B", "c", "é"]))
    if draw(st.integers(0, 5)) == 0:
        return ExecutionEvent(
            event_id=event_id,
            workflow_id="w",
            workflow_version="v1",
            occurred_at=NOW,
            cost_role=CostRole.SUMMARY,
        )
    cost = draw(st.sampled_from([None, Decimal("0.1"), Decimal("0.10"), Decimal(2)]))
    return ExecutionEvent(
        event_id=event_id,
        workflow_id="w",
        workflow_version="v1",
        occurred_at=NOW,
        attempt=draw(st.integers(1, 2)),
        charge_id=draw(st.sampled_from(["c1", "c2", f"c-{event_id}"])),
        cost_usd=cost,
        cost_measurement=CostMeasurement.UNMEASURED if cost is None else CostMeasurement.MEASURED,
        dimensions=draw(st.sampled_from([{}, {"tier": "pro", "n": 1.5}, {"tier": "x\t\\y\n"}])),
    )


def answer(uow: Any, tenant: str, batch: list[Digested[ExecutionEvent]]) -> Any:
    """How many exact replays the store counted, or that it refused the batch."""
    try:
        with uow() as unit:
            replayed = unit.evidence.add_executions(tenant, batch)
            unit.commit()
    except Conflict:
        return "conflict"
    return replayed


def stored_in_postgres(store: PostgresStore, tenant: str) -> list[tuple[str, str, Any]]:
    with store.pool.connection() as conn:
        rows = conn.execute(
            "SELECT * FROM ecp_evidence_executions WHERE tenant_id = %s", (tenant,)
        ).fetchall()
    return sorted((row["event_id"], row["digest"], execution_of(row)) for row in rows)


def stored_in_memory(memory: MemoryStore, tenant: str) -> list[tuple[str, str, Any]]:
    with memory.unit_of_work() as unit:
        tables = unit.evidence
        assert isinstance(tables, EvidenceTables)
        entries = tables.digested(EXECUTIONS, tenant)
    return sorted((entry.item.event_id, entry.digest, entry.item) for entry in entries)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.lists(events(), min_size=1, max_size=6), min_size=1, max_size=4))
def test_batches_answer_and_store_as_the_memory_store(fresh_database, batches):
    tenant = f"tenant-{next(_tenants)}"
    memory = MemoryStore()
    with PostgresStore(fresh_database, min_size=1, max_size=1) as store:
        store.pool.wait()
        for batch in batches:
            digested = checked(batch, execution_problems)
            expected = answer(memory.unit_of_work, tenant, digested)
            assert answer(store.unit_of_work, tenant, digested) == expected
        assert stored_in_postgres(store, tenant) == stored_in_memory(memory, tenant)


def staged_rows(conn: Any) -> int:
    row = conn.execute("SELECT count(*) AS n FROM ecp_staged_evidence_executions").fetchone()
    return int(row["n"])


def test_the_staging_table_is_empty_after_a_merge_and_after_a_refusal(fresh_database):
    with PostgresStore(fresh_database, min_size=1, max_size=1) as store:  # one session
        merge_and_refuse(store)
        with store.pool.connection() as conn:
            staging = conn.execute("SELECT to_regclass('ecp_staged_evidence_executions') AS t")
            assert staging.fetchone()["t"] is None or staged_rows(conn) == 0


def merge_and_refuse(postgres_store: PostgresStore) -> None:
    first = ExecutionEvent(
        event_id="a", workflow_id="w", workflow_version="v1", occurred_at=NOW, charge_id="c1"
    )
    second = ExecutionEvent(
        event_id="b", workflow_id="w", workflow_version="v1", occurred_at=NOW, charge_id="c2"
    )
    changed = ExecutionEvent(
        event_id="a", workflow_id="w", workflow_version="v2", occurred_at=NOW, charge_id="c1"
    )
    assert answer(postgres_store.unit_of_work, "t", checked([first], execution_problems)) == 0
    with postgres_store.unit_of_work() as unit:
        batch = checked([first, second], execution_problems)
        assert unit.evidence.add_executions("t", batch) == 1  # merged: one replay, one new
        assert unit.evidence.add_executions("t", batch) == 2  # a second batch, same transaction
        unit.commit()
    with (
        postgres_store.unit_of_work() as unit,
        pytest.raises(Conflict, match="event a was stored with other content"),
    ):
        unit.evidence.add_executions("t", checked([second, changed], execution_problems))


# -- bodies read while they are stored (rows COPYed as read) --------------------------------------


def wire_event(event_id: str, *, charge: str, version: str = "v1", broken: bool = False) -> dict:
    event: dict[str, Any] = {
        "event_id": event_id,
        "workflow_id": "w",
        "workflow_version": version,
        "occurred_at": "2026-03-01T10:00:00.000000Z",
        "charge_id": charge,
        "cost_usd": "0.10",
        "cost_measurement": "measured",
        "dimensions": {"tier": "pro", "n": 1.5},
    }
    if broken:
        event["attempt"] = 0
    return event


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """Bodies of few ids in any order: replays, changes, charge collisions, a broken event.

    Within one body an id repeats with the same content (exact replays inside a batch): of a
    batch that repeats an id with other content and a taken charge, the two stores name
    different culprits (both 409), an edge older than reading as rows.
    """
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=6))
    content = {
        event_id: wire_event(
            event_id,
            charge=draw(st.sampled_from(["c1", "c2", "c3", "c4", "c5"])),
            version=draw(st.sampled_from(["v1", "v1", "v2"])),
            broken=draw(st.integers(0, 12)) == 0,
        )
        for event_id in sorted(set(ids))
    }
    return json.dumps({"events": [content[event_id] for event_id in ids]}).encode()


def ingested(service: EvidenceService, tenant: str, body: bytes) -> Any:
    """The service's answer to a body: its result, or the error (type, message, field errors)."""
    try:
        return service.ingest_execution_json(tenant, body)
    except EcpError as exc:
        return type(exc), str(exc), getattr(exc, "errors", None)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(bodies(), min_size=1, max_size=4))
def test_bodies_stored_as_read_answer_and_store_as_the_memory_store(fresh_database, sequence):
    """Rows COPYed while later events are read: ids out of order (the batch sorted and COPYed
    again), replays (the merge) and a broken later event (the COPY abandoned) answer and leave
    exactly what the memory store does."""
    tenant = f"tenant-{next(_tenants)}"
    memory = MemoryStore()
    with PostgresStore(fresh_database, min_size=1, max_size=1) as store:
        store.pool.wait()
        in_memory = EvidenceService(memory.unit_of_work, SystemClock())
        in_postgres = EvidenceService(store.unit_of_work, SystemClock())
        for body in sequence:
            assert ingested(in_postgres, tenant, body) == ingested(in_memory, tenant, body)
        assert stored_in_postgres(store, tenant) == stored_in_memory(memory, tenant)
        with store.pool.connection() as conn:
            staging = conn.execute("SELECT to_regclass('ecp_staged_evidence_executions') AS t")
            assert staging.fetchone()["t"] is None or staged_rows(conn) == 0
