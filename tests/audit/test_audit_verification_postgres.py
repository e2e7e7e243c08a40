"""Audit verification on PostgreSQL (ADR 0061): parallel across connections, never locking.

A deployment's chains are verified in batches, several units of work at once; the answer is the
serial one, first failure included. Verification reads heads and records in one snapshot without
row locks, so a transaction that holds a chain head (an append in progress) does not hold it up.
"""

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import psycopg
import pytest

from ecp_core.audit import AuditVerificationResponse, seal
from ecp_core.audit.record import NodeAuditRecord
from ecp_core.deployments.model import Deployment
from ecp_core.runs.audit.trail import RUNS_PER_READ, AuditTrail
from ecp_core.runs.run.model import Run
from ecp_core.testing.strategies.audit import SIGNER, fixed_salt
from ecp_core.types import AttemptStatus, RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.spec("§2.3 audit-verification")]

RUNS = 2 * RUNS_PER_READ + 7
"""Three batches, the last one short."""
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def store(postgres_store):
    """A deployment of RUNS runs with three-record signed chains (every third one version 3)."""
    with postgres_store.unit_of_work() as uow:
        uow.deployments.add(
            Deployment(
                tenant_id="t1",
                deployment_ref="dep",
                graph_id="g",
                graph_version=1,
                graph_version_ref="g@1",
                created_at=NOW,
            )
        )
        for index in range(RUNS):
            run_id = f"run-{index:04d}"
            uow.runs.add(_run(run_id))
            for record in _chain(run_id, salted=index % 3 == 0):
                uow.audit.append(record)
        uow.commit()
    return postgres_store


def _chain(run_id: str, *, salted: bool) -> list[NodeAuditRecord]:
    contents = [{"stdout": f"out {run_id}"}, {"input_snapshot": {"run": run_id, "x": 1.5}}, {}]
    records: list[NodeAuditRecord] = []
    for index, content in enumerate(contents):
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=SIGNER,
                created_at=NOW,
                digest_version=3 if salted else 2,
                salt=fixed_salt(run_id, index) if salted else None,
                audit_id=f"{run_id}-audit-{index + 1}",
                run_id=run_id,
                tenant_id="t1",
                deployment_ref="dep",
                graph_version_ref="g@1",
                node_id="n",
                attempt=index + 1,
                status=AttemptStatus.SUCCEEDED,
                **content,
            )
        )
    return records


def _run(run_id: str) -> Run:
    return Run(
        run_id=run_id,
        tenant_id="t1",
        deployment_ref="dep",
        graph_version_ref="g@1",
        thread_id=run_id,
        status=RunStatus.COMPLETED,
        created_at=NOW,
        updated_at=NOW,
    )


def _services(store) -> tuple[AuditTrail, AuditTrail]:
    keys = [SIGNER.published()]
    return (
        AuditTrail(store.unit_of_work, keys, connections=1),
        AuditTrail(store.unit_of_work, keys, connections=4),
    )


def test_parallel_verification_gives_the_serial_answer(store):
    serial, parallel = _services(store)
    expected = AuditVerificationResponse(
        scope="deployment:dep",
        verified=True,
        signature_verified=True,
        signing_key_id=SIGNER.key_id,
        record_count=3 * RUNS,
    )
    assert serial.verify_deployment("t1", "dep") == expected
    assert parallel.verify_deployment("t1", "dep") == expected


@pytest.mark.spec("C4 chain-per-run")
def test_parallel_verification_reports_the_serial_failure(store, postgres_url):
    late, early = f"run-{RUNS - 2:04d}", f"run-{RUNS_PER_READ + 3:04d}"
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(
            "UPDATE ecp_audit_records SET stdout = 'forged' WHERE audit_id = %s",
            (f"{late}-audit-1",),
        )
        conn.execute(
            "UPDATE ecp_audit_records SET signature = %s WHERE audit_id = %s",
            (SIGNER.sign_text("sha256:" + "0" * 64), f"{early}-audit-2"),
        )
    serial, parallel = _services(store)
    answer = parallel.verify_deployment("t1", "dep")
    assert answer == serial.verify_deployment("t1", "dep")
    assert (answer.verified, answer.signature_verified) == (False, False)
    assert answer.failed_audit_id == f"{late}-audit-1"  # a digest failure before a signature one


def test_verification_does_not_wait_for_a_held_chain_head(store):
    """An appender holds the head row (FOR UPDATE) in an open transaction; verification goes on."""
    _, service = _services(store)
    answers: list[AuditVerificationResponse] = []
    with psycopg.connect(store.url) as appender:
        appender.execute("SELECT 1 FROM ecp_audit_heads FOR UPDATE")  # every head, held
        worker = threading.Thread(
            target=lambda: answers.extend(
                [service.verify_run("t1", "run-0001"), service.verify_deployment("t1", "dep")]
            ),
            daemon=True,
        )
        worker.start()
        worker.join(timeout=120)  # a liveness bound, not a timing: a lock would never be granted
        finished = not worker.is_alive()
        appender.rollback()
    worker.join()
    assert finished
    assert [answer.verified for answer in answers] == [True, True]
    assert answers[1].record_count == 3 * RUNS


def test_concurrent_verifications_share_the_connection_cap(store):
    """Three deployment verifications at once hold at most ``connections`` units of work."""
    lock, counts = threading.Lock(), {"open": 0, "most": 0}

    @contextlib.contextmanager
    def counted():
        with store.unit_of_work() as uow:
            with lock:
                counts["open"] += 1
                counts["most"] = max(counts["most"], counts["open"])
            try:
                yield uow
            finally:
                with lock:
                    counts["open"] -= 1

    service = AuditTrail(counted, [SIGNER.published()], connections=2)
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda _: service.verify_deployment("t1", "dep"), range(3)))
    assert all(answer.verified and answer.record_count == 3 * RUNS for answer in answers)
    assert 1 <= counts["most"] <= 2
