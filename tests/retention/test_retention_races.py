"""Retention on a real PostgreSQL: legal holds racing the TTL purge, and the purge's promises.

The race is made deterministic without mocking ECP: the test holds the tenant's retention lock
exclusively in a unit of work of its own (the lock ``place_hold`` takes), starts the sweep in a
thread, waits until ``pg_locks`` shows the sweep's erasure waiting for that lock, and only then
adds the hold and commits.
"""

import concurrent.futures
import itertools
import time
from datetime import UTC, datetime

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import LegalHoldActive, RunStillActive
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.retention import (
    CreateLegalHoldRequest,
    ErasureRequest,
    LegalHold,
    RetentionPolicyRequest,
)
from ecp_core.service import RetentionSettings
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import RunStatus
from ecp_postgres import PostgresStore, create_database, drop_database
from ecp_postgres.retention import LOCK_NAMESPACE

pytestmark = pytest.mark.integration

TENANT = "t"
ADMIN = ActorIdentity(subject="dpo", auth_method=AuthMethod.BEARER, tenant_id=TENANT)
SIGNER = Ed25519Signer(bytes(range(5, 37)), key_id="retention-race")
START = datetime(2026, 1, 1, tzinfo=UTC)
RUN_TTL = 60
WAIT_SECONDS = 20.0

# pg_locks shows a bigint advisory key as classid (high 32 bits) and objid (low 32 bits), with
# objsubid 1; shifting a bigint wraps, so the pair recombines into the signed key.
WAITING_FOR_RETENTION_LOCK = """
SELECT l.mode, l.granted
FROM pg_locks l
WHERE l.locktype = 'advisory'
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.objsubid = 1
  AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(%s, 0)
  AND NOT l.granted
"""


def world(store: PostgresStore, ids_prefix: str = "r") -> tuple[Ecp, FixedClock]:
    """ECP on ``store``: graph action ``store`` -> approval -> end, deployed as ``d``."""
    clock = FixedClock(START)
    ecp = Ecp.build(
        store.unit_of_work,
        signer=SIGNER,
        clock=clock,
        ids=SequentialIds(ids_prefix),
        retention=RetentionSettings(artifacts=MemoryArtifacts()),
    )
    ecp.actions.register(
        "store",
        lambda context: {
            "artifact_key": f"shared/{context.run_id}.pdf",
            "email": context.state.get("email"),
        },
    )
    graph = (
        GraphBuilder("g")
        .action("save", "store")
        .approval("ok", summary="s", rationale="r")
        .end("done")
        .chain("save", "ok", "done")
        .build()
    )
    ecp.graphs.register(TENANT, graph)
    ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp, clock


def run_to(ecp: Ecp, status: str = "completed", email: str = "ana@example.com"):
    """A run that is ``completed``, ``failed`` (approval rejected) or ``waiting`` for approval."""
    run, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d", input={"email": email}))
    run = ecp.runs.drive(TENANT, run.run_id)
    assert run.status is RunStatus.WAITING_APPROVAL
    if status == "waiting":
        return run
    decision = ApprovalDecision.APPROVE if status == "completed" else ApprovalDecision.REJECT
    ecp.resolve(
        ADMIN, "d", run.pending_approval_ids[0], ApprovalResolutionRequest(decision=decision)
    )
    run = ecp.runs.get(TENANT, run.run_id)
    assert run.status is (RunStatus.COMPLETED if status == "completed" else RunStatus.FAILED)
    return run


def snapshot(store: PostgresStore, run_id: str):
    """The run row, its audit records and its approvals, as stored now."""
    with store.unit_of_work() as uow:
        return (
            uow.runs.get(TENANT, run_id),
            uow.audit.for_run(TENANT, run_id),
            uow.approvals.for_run(TENANT, run_id),
        )


def retention_log_of(ecp: Ecp, run_id: str):
    return [entry for entry in ecp.retention.log(TENANT, limit=1000) if entry.run_id == run_id]


def waiting_modes(url: str) -> list[str]:
    """Modes of the advisory-lock requests on the tenant's retention key that are not granted."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(WAITING_FOR_RETENTION_LOCK, (LOCK_NAMESPACE + TENANT,)).fetchall()
    return [mode for mode, _ in rows]


def wait_until_blocked(url: str, sweep: concurrent.futures.Future) -> list[str]:
    """Poll pg_locks until the sweep waits for the retention lock; fail if it never does."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        modes = waiting_modes(url)
        if modes:
            return modes
        if sweep.done():
            pytest.fail(f"the sweep ended without waiting for the retention lock: {sweep.result()}")
        time.sleep(0.01)
    pytest.fail("the sweep never waited for the tenant's retention lock")


def expire(ecp: Ecp, clock: FixedClock) -> None:
    """A run TTL only (no audit TTL), and the clock past it."""
    ecp.retention.put_policy(
        TENANT, RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=RUN_TTL)
    )
    clock.advance(2 * RUN_TTL)


# -- the race ---------------------------------------------------------------------------------


@pytest.mark.spec("§3.3 legal-hold-blocks-erasure", "§9.1 purge-worker")
def test_a_hold_placed_while_the_sweep_selects_leaves_the_run_untouched(postgres_store):
    ecp, clock = world(postgres_store)
    run = run_to(ecp)
    expire(ecp, clock)
    before = snapshot(postgres_store, run.run_id)
    assert before[0].erased_at is None and before[1] and not any(r.erased for r in before[1])

    with concurrent.futures.ThreadPoolExecutor(1) as pool, postgres_store.unit_of_work() as uow:
        uow.retention.lock_tenant(TENANT, exclusive=True)  # what place_hold does first
        sweep = pool.submit(ecp.retention.sweep)
        try:
            # The sweep selected the run (no hold yet) and its erasure now waits, shared.
            assert wait_until_blocked(postgres_store.url, sweep) == ["ShareLock"]
            uow.retention.add_hold(
                LegalHold(
                    hold_id="hold-race",
                    tenant_id=TENANT,
                    run_id=run.run_id,
                    reason="litigation",
                    created_at=clock.now(),
                    created_by="dpo",
                )
            )
        finally:
            uow.commit()  # places the hold and releases the lock, or just releases it
        report = sweep.result(timeout=WAIT_SECONDS)

    assert report.failures == ()
    assert (report.runs_erased, report.records_tombstoned) == (0, 0)
    assert snapshot(postgres_store, run.run_id) == before
    assert retention_log_of(ecp, run.run_id) == []
    assert ecp.audit.verify_run(TENANT, run.run_id).verified

    ecp.retention.release_hold(ADMIN, "hold-race")
    again = ecp.retention.sweep()
    assert (again.failures, again.runs_erased) == ((), 1)
    erased_run, records, _ = snapshot(postgres_store, run.run_id)
    assert erased_run.erased_at == clock.now()
    assert (erased_run.output, erased_run.state) == (None, {})
    assert all(r.erased and r.input_snapshot is None for r in records)
    assert [r.record_digest for r in records] == [r.record_digest for r in before[1]]
    verified = ecp.audit.verify_run(TENANT, run.run_id)
    assert (verified.verified, verified.signature_verified) == (True, True)
    assert verified.record_count == len(before[1])
    assert ecp.retention.sweep().runs_erased == 0


@pytest.mark.spec("§3.3 legal-hold-blocks-erasure", "§9.1 purge-worker")
@pytest.mark.parametrize("scope", ["run", "tenant"])
def test_a_hold_committed_before_the_sweep_keeps_the_run_out_of_the_candidates(
    postgres_store, scope
):
    ecp, clock = world(postgres_store)
    run = run_to(ecp)
    expire(ecp, clock)
    ecp.retention.place_hold(
        ADMIN, CreateLegalHoldRequest(reason="audit", run_id=run.run_id if scope == "run" else None)
    )
    before = snapshot(postgres_store, run.run_id)

    # With the retention lock held elsewhere, any erasure attempt would block: a sweep that
    # finishes meanwhile never tried to erase the held run, it excluded it at selection.
    with concurrent.futures.ThreadPoolExecutor(1) as pool, postgres_store.unit_of_work() as uow:
        uow.retention.lock_tenant(TENANT, exclusive=True)
        sweep = pool.submit(ecp.retention.sweep)
        try:
            report = sweep.result(timeout=WAIT_SECONDS)
        except concurrent.futures.TimeoutError:
            pytest.fail(
                f"the sweep waits for the retention lock: {waiting_modes(postgres_store.url)}"
            )
        finally:
            uow.commit()
    assert report.failures == ()
    assert report.runs_erased == 0
    assert snapshot(postgres_store, run.run_id) == before
    assert retention_log_of(ecp, run.run_id) == []


# -- the purge's promises, as a property -------------------------------------------------------

_databases = itertools.count()

kinds = st.sampled_from(["completed", "failed", "waiting"])
hold_kinds = st.sampled_from(["none", "none", "run", "released"])
tenant_holds = st.sampled_from(["none", "none", "active", "released"])


@pytest.mark.spec("§9.1 purge-worker", "§3.3 ttl-terminal-runs-only")
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    plan=st.lists(st.tuples(kinds, hold_kinds, st.integers(0, 3)), min_size=1, max_size=5),
    tenant_hold=tenant_holds,
    ttl=st.integers(1, 5),
    elapsed=st.integers(0, 8),
)
def test_the_purge_erases_exactly_the_eligible_runs(
    postgres_url, migrated_template, plan, tenant_hold, ttl, elapsed
):
    name = f"ecp_test_retention_prop_{next(_databases)}"
    drop_database(postgres_url, name)
    url = create_database(postgres_url, name, template=migrated_template)
    try:
        with PostgresStore(url, max_size=4) as store:
            check_purge(store, plan, tenant_hold, ttl, elapsed)
    finally:
        drop_database(postgres_url, name)


def check_purge(store, plan, tenant_hold, ttl, elapsed):
    ecp, clock = world(store)
    runs = []
    for index, (kind, hold, delay) in enumerate(plan):
        clock.advance(delay)
        run = run_to(ecp, kind, email=f"person{index}@example.com")
        if hold != "none":
            placed = ecp.retention.place_hold(
                ADMIN, CreateLegalHoldRequest(reason="h", run_id=run.run_id)
            )
            if hold == "released":
                ecp.retention.release_hold(ADMIN, placed.hold_id)
        runs.append((run.run_id, kind, hold == "run"))
    if tenant_hold != "none":
        placed = ecp.retention.place_hold(ADMIN, CreateLegalHoldRequest(reason="all"))
        if tenant_hold == "released":
            ecp.retention.release_hold(ADMIN, placed.hold_id)
    ecp.retention.put_policy(
        TENANT, RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=ttl)
    )
    clock.advance(elapsed)
    now = clock.now()
    before = {run_id: snapshot(store, run_id) for run_id, _, _ in runs}

    def held(run_is_held):
        return run_is_held or tenant_hold == "active"

    def eligible(run_id, kind, run_is_held):
        run = before[run_id][0]
        expired = (now - run.updated_at).total_seconds() > ttl
        return kind != "waiting" and not held(run_is_held) and expired

    expected = {run_id for run_id, kind, h in runs if eligible(run_id, kind, h)}
    report = ecp.retention.sweep()
    assert report.failures == ()
    assert report.runs_erased == len(expected)

    after = {}
    for run_id, _, _ in runs:
        stored, records, approvals = after[run_id] = snapshot(store, run_id)
        old_run, old_records, _ = before[run_id]
        if run_id in expected:
            assert stored.erased_at == now
            assert (stored.output, stored.state, stored.metadata) == (None, {}, None)
            assert stored.status is old_run.status  # redacted in place, never "un-terminated"
            assert all(r.erased and r.erasure_reason == "run_ttl" for r in records)
            assert all(r.input_snapshot is None and r.output_snapshot is None for r in records)
            assert [r.record_digest for r in records] == [r.record_digest for r in old_records]
            assert all(a.proposed_payload is None for a in approvals)
            result = ecp.audit.verify_run(TENANT, run_id)
            assert (result.verified, result.signature_verified) == (True, True)
            assert result.record_count == len(old_records)
        else:
            # Not terminal, held, or not yet expired: not a byte changed, nothing logged.
            assert (stored, records, approvals) == before[run_id]
            assert retention_log_of(ecp, run_id) == []

    second = ecp.retention.sweep()
    assert (second.failures, second.runs_erased) == ((), 0)
    assert {run_id: snapshot(store, run_id) for run_id, _, _ in runs} == after

    for run_id, kind, run_is_held in runs:
        request = ErasureRequest(run_id=run_id, reason="subject request")
        if held(run_is_held):
            with pytest.raises(LegalHoldActive):
                ecp.retention.request_erasure(ADMIN, request)
            assert snapshot(store, run_id) == before[run_id]
            continue
        if kind == "waiting":
            with pytest.raises(RunStillActive):
                ecp.retention.request_erasure(ADMIN, request)
            assert snapshot(store, run_id) == before[run_id]
            continue
        first = ecp.retention.request_erasure(ADMIN, request)
        assert (first.newly_erased == 0) is (run_id in expected)
        repeated = ecp.retention.request_erasure(ADMIN, request)
        assert repeated.newly_erased == 0
        assert all(r.erased for r in snapshot(store, run_id)[1])
        assert ecp.audit.verify_run(TENANT, run_id).verified
