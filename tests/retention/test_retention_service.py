"""Retention on the core: erasure steps, holds, idempotence, and the purge sweep's promises."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import LegalHoldActive, NotFound, RunStillActive, ValidationFailed
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.retention import (
    CreateLegalHoldRequest,
    ErasureRequest,
    RetentionPolicyRequest,
    RetentionPolicySource,
)
from ecp_core.service import RetentionSettings
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import CostMeasurement, RunStatus

pytestmark = pytest.mark.unit

ADMIN = ActorIdentity(subject="dpo", auth_method=AuthMethod.BEARER, tenant_id="t")
START = datetime(2026, 1, 1, tzinfo=UTC)


def world(artifacts=None, econ=False):
    clock = FixedClock(START)
    ecp = Ecp.in_memory(
        clock=clock,
        ids=SequentialIds("r"),
        retention=RetentionSettings(
            artifacts=artifacts or MemoryArtifacts(), econ_erase_enabled=econ
        ),
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
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp, clock


def run_to(ecp, status="completed", email="a@b.c"):
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"email": email}))
    run = ecp.runs.drive("t", run.run_id)
    if status == "waiting":
        return run
    decision = ApprovalDecision.APPROVE if status == "completed" else ApprovalDecision.REJECT
    ecp.resolve(
        ADMIN, "d", run.pending_approval_ids[0], ApprovalResolutionRequest(decision=decision)
    )
    return ecp.runs.get("t", run.run_id)


@pytest.mark.spec("§9.1 erasure-steps", "§3.2 crypto-erase-v2", "§6.2 retention-log-per-step")
def test_erasure_runs_every_step_and_keeps_the_chain_verifying():
    artifacts = MemoryArtifacts()
    ecp, _ = world(artifacts)
    run = run_to(ecp)
    artifacts.put(f"t/{run.run_id}/report.pdf", b"x")
    artifacts.put(f"shared/{run.run_id}.pdf", b"y")
    artifacts.put("t/other/keep.pdf", b"z")
    before = ecp.audit.verify_run("t", run.run_id)
    report = ecp.retention.request_erasure(
        ADMIN, ErasureRequest(run_id=run.run_id, reason="subject request")
    )
    steps = [(s.step, s.status.value, s.newly_erased) for s in report.runs[0].steps]
    assert steps == [
        ("crypto_erase_audits", "done", before.record_count),
        ("delete_checkpoints", "done", 2),
        ("redact_run", "done", 1),
        ("clean_artifacts", "done", 2),
        ("econ_erase_skipped", "skipped", 0),
    ]
    assert list(artifacts.items) == ["t/other/keep.pdf"]
    after = ecp.audit.verify_run("t", run.run_id)
    assert (after.verified, after.signature_verified, after.record_count) == (
        True,
        True,
        before.record_count,
    )
    erased = ecp.runs.get("t", run.run_id)
    assert (erased.state, erased.output, erased.metadata, erased.error) == ({}, None, None, None)
    assert all(a.proposed_payload is None for a in ecp.approvals.for_run("t", run.run_id))
    assert all(
        e.erased and e.input_snapshot is None for e in ecp.audit.timeline("t", run.run_id).entries
    )
    again = ecp.retention.request_erasure(
        ADMIN, ErasureRequest(run_id=run.run_id, reason="subject request")
    )
    assert again.newly_erased == 0
    log = ecp.retention.log("t", limit=100)
    assert len(log) == 10
    assert {e.step for e in log} >= {"crypto_erase_audits", "redact_run", "econ_erase_skipped"}


def _evidence(run_id, event_id, *, join_key=None):
    return ExecutionEvent(
        event_id=event_id,
        workflow_id="w",
        workflow_version="1",
        run_id=run_id,
        occurred_at=START,
        join_key=join_key,
        charge_id=event_id,
        cost_usd=Decimal("0.5"),
        cost_measurement=CostMeasurement.MEASURED,
    )


@pytest.mark.spec("§9.1 econ-erasure-join-key")
def test_enabled_econ_erasure_deletes_the_runs_evidence_and_nothing_else():
    ecp, _ = world(econ=True)
    run, other = run_to(ecp), run_to(ecp)
    ecp.evidence.ingest_executions(
        "t", [_evidence(run.run_id, "e1"), _evidence(None, "e2"), _evidence(other.run_id, "e3")]
    )
    report = ecp.retention.request_erasure(ADMIN, ErasureRequest(run_id=run.run_id, reason="r"))
    last = report.runs[0].steps[-1]
    assert (last.step, last.status.value, last.newly_erased) == (
        "delete_economic_events",
        "done",
        1,
    )
    # What is left is exactly the other events: replaying them stores nothing new.
    left = ecp.evidence.ingest_executions(
        "t", [_evidence(None, "e2"), _evidence(other.run_id, "e3")]
    )
    assert (left.stored, left.replayed) == (0, 2)
    again = ecp.retention.request_erasure(ADMIN, ErasureRequest(run_id=run.run_id, reason="r"))
    assert again.runs[0].steps[-1].newly_erased == 0


@pytest.mark.spec("§3.3 legal-hold-blocks-erasure", "§6.2 retention-log-per-step")
def test_holds_beat_erasure_until_released():
    ecp, _ = world()
    run = run_to(ecp)
    hold = ecp.retention.place_hold(
        ADMIN, CreateLegalHoldRequest(reason="litigation", run_id=run.run_id)
    )
    with pytest.raises(LegalHoldActive):
        ecp.retention.request_erasure(ADMIN, ErasureRequest(run_id=run.run_id, reason="r"))
    assert ecp.audit.timeline("t", run.run_id).entries[0].erased is False
    released = ecp.retention.release_hold(ADMIN, hold.hold_id)
    assert released.released_at is not None
    assert ecp.retention.holds("t")[0].hold_id == hold.hold_id
    assert (
        ecp.retention.request_erasure(
            ADMIN, ErasureRequest(run_id=run.run_id, reason="r")
        ).newly_erased
        > 0
    )


@pytest.mark.spec("§3.3 legal-hold-blocks-erasure", "§2.8 legal-hold")
def test_a_tenant_wide_hold_blocks_tenant_erasure():
    ecp, _ = world()
    run_to(ecp)
    ecp.retention.place_hold(ADMIN, CreateLegalHoldRequest(reason="audit"))
    with pytest.raises(LegalHoldActive):
        ecp.retention.request_erasure(ADMIN, ErasureRequest(tenant_id="t", reason="r"))


@pytest.mark.spec("§9.1 erasure-granularity")
def test_request_shapes_and_scope():
    ecp, _ = world()
    run = run_to(ecp, "waiting")
    with pytest.raises(RunStillActive):
        ecp.retention.request_erasure(ADMIN, ErasureRequest(run_id=run.run_id, reason="r"))
    with pytest.raises(ValidationFailed):
        ecp.retention.request_erasure(ADMIN, ErasureRequest(reason="r"))
    with pytest.raises(NotFound):
        ecp.retention.request_erasure(ADMIN, ErasureRequest(tenant_id="other", reason="r"))
    with pytest.raises(NotFound):
        ecp.retention.place_hold(
            ActorIdentity(subject="x", auth_method=AuthMethod.BEARER, tenant_id="u"),
            CreateLegalHoldRequest(reason="r", run_id=run.run_id),
        )


@pytest.mark.spec("§9.1 policy-resolution")
def test_policy_resolution_through_the_service():
    ecp, _ = world()
    assert ecp.retention.policy("t").source is RetentionPolicySource.SYSTEM_DEFAULT
    resolved = ecp.retention.put_policy(
        "t", RetentionPolicyRequest(audit_ttl_seconds=60, run_ttl_seconds=None)
    )
    assert (resolved.source, resolved.audit_ttl_seconds, resolved.run_ttl_seconds) == (
        RetentionPolicySource.TENANT,
        60,
        None,
    )


kinds = st.sampled_from(["completed", "failed", "waiting"])


@pytest.mark.spec("§9.1 purge-worker", "§3.3 ttl-terminal-runs-only")
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(kinds, st.booleans(), st.integers(0, 3)), min_size=1, max_size=6),
    st.integers(1, 5),
    st.booleans(),
    st.integers(0, 8),
)
def test_purge_erases_exactly_the_eligible_runs(plan, ttl, tenant_hold, elapsed):
    ecp, clock = world()
    runs = []
    for kind, hold, delay in plan:
        clock.advance(delay)
        run = run_to(ecp, kind)
        if hold:
            ecp.retention.place_hold(ADMIN, CreateLegalHoldRequest(reason="h", run_id=run.run_id))
        runs.append((ecp.runs.get("t", run.run_id), hold))
    if tenant_hold:
        ecp.retention.place_hold(ADMIN, CreateLegalHoldRequest(reason="all"))
    ecp.retention.put_policy(
        "t", RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=ttl)
    )
    clock.advance(elapsed)
    report = ecp.retention.sweep()
    assert report.failures == ()
    now = clock.now()
    for run, hold in runs:
        eligible = (
            run.status in (RunStatus.COMPLETED, RunStatus.FAILED)
            and not hold
            and not tenant_hold
            and (now - run.updated_at).total_seconds() > ttl
        )
        entries = ecp.audit.timeline("t", run.run_id).entries
        assert all(e.erased for e in entries) is eligible or not entries
        assert any(e.erased for e in entries) is eligible
        assert (ecp.runs.get("t", run.run_id).output is None) is (
            eligible or run.status is not RunStatus.COMPLETED
        )
    assert ecp.retention.sweep().runs_erased == 0


@pytest.mark.spec("§9.1 purge-worker")
def test_erased_runs_are_marked_and_not_selected_again():
    ecp, clock = world()
    run = run_to(ecp)
    ecp.retention.put_policy("t", RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=1))
    clock.advance(5)
    assert ecp.retention.sweep().runs_erased == 1
    assert ecp.runs.get("t", run.run_id).erased_at == clock.now()
    with ecp.runs._uow() as uow:
        assert uow.runs.expired("t", clock.now(), 10) == []


@pytest.mark.spec("§9.1 ttl-clocks")
def test_the_audit_ttl_tombstones_aged_records_only():
    ecp, clock = world()
    old = run_to(ecp)
    clock.advance(100)
    new = run_to(ecp)
    ecp.retention.put_policy(
        "t", RetentionPolicyRequest(audit_ttl_seconds=50, run_ttl_seconds=None)
    )
    report = ecp.retention.sweep()
    assert report.records_tombstoned == len(ecp.audit.timeline("t", old.run_id).entries)
    assert all(e.erased for e in ecp.audit.timeline("t", old.run_id).entries)
    assert not any(e.erased for e in ecp.audit.timeline("t", new.run_id).entries)
    assert ecp.runs.get("t", old.run_id).output is not None
    assert ecp.audit.verify_run("t", old.run_id).verified


@pytest.mark.spec("§9.1 erasure-granularity")
def test_tenant_erasure_erases_ended_runs_and_reports_active_ones():
    ecp, _ = world()
    done, failed, waiting = run_to(ecp), run_to(ecp, "failed"), run_to(ecp, "waiting")
    report = ecp.retention.request_erasure(
        ADMIN, ErasureRequest(tenant_id="t", reason="account closed")
    )
    by_run = {r.run_id: r.erased for r in report.runs}
    assert by_run == {done.run_id: True, failed.run_id: True, waiting.run_id: False}
    assert report.target == "tenant:t"
    assert not any(e.erased for e in ecp.audit.timeline("t", waiting.run_id).entries)
    assert ecp.runs.get("t", waiting.run_id).status is RunStatus.WAITING_APPROVAL
    assert (
        ecp.retention.request_erasure(
            ADMIN, ErasureRequest(tenant_id="t", reason="again")
        ).newly_erased
        == 0
    )


@pytest.mark.spec("§9.1 erasure-steps")
def test_filesystem_artifacts_stay_inside_their_directory(tmp_path):
    from ecp_http.startup.artifacts import FilesystemArtifacts

    store = FilesystemArtifacts(tmp_path / "artifacts")
    store.put("t/r1/a.txt", b"a")
    store.put("t/r1/deep/b.txt", b"b")
    store.put("t/r2/c.txt", b"c")
    store.put("shared/x.pdf", b"x")
    with pytest.raises(ValueError, match="leaves"):
        store.put("../escape.txt", b"no")
    assert store.delete_prefix("t/r1/") == 2
    assert store.delete(["shared/x.pdf", "shared/missing.pdf", "../../etc/passwd"]) == 1
    assert sorted(
        p.relative_to(tmp_path / "artifacts").as_posix()
        for p in (tmp_path / "artifacts").rglob("*.txt")
    ) == ["t/r2/c.txt"]
