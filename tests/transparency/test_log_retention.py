"""Erasure and purge keep every proof valid, and the purge records what it erased.

Erasing a record keeps its digest (it covers commitments, not the personal data), so the log
neither gains nor loses a leaf: the checkpoint before the purge is a prefix of every later one,
every run's bundle still verifies, and the retention log names each record the purge erased.
"""

from datetime import UTC, datetime

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
from ecp_core.retention import ErasureRequest, RetentionPolicyRequest
from ecp_core.runs.audit.bundle_check import verify_bundle
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import verify_consistency
from ecp_core.transparency.notes import parse_note
from ecp_core.wire import unstructure

pytestmark = pytest.mark.unit

ADMIN = ActorIdentity(subject="dpo", auth_method=AuthMethod.BEARER, tenant_id="t")
START = datetime(2026, 1, 1, tzinfo=UTC)


def world() -> tuple[Ecp, FixedClock]:
    clock = FixedClock(START)
    ecp = Ecp.in_memory(clock=clock, ids=SequentialIds("r"))
    graph = (
        GraphBuilder("g")
        .approval("ok", summary="s", rationale="r")
        .end("done")
        .chain("ok", "done")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    return ecp, clock


def finished(ecp: Ecp) -> str:
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d", input={"email": "a@b.c"}))
    run = ecp.runs.drive("t", run.run_id)
    request = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
    ecp.resolve(ADMIN, "d", run.pending_approval_ids[0], request)
    return run.run_id


def checkpoint(ecp: Ecp) -> Checkpoint:
    assert ecp.log_integrator is not None and ecp.transparency is not None
    ecp.log_integrator.integrate()
    return Checkpoint.parse(parse_note(ecp.transparency.checkpoint("t")).text)


def bundle_verifies(ecp: Ecp, run_id: str) -> bool:
    assert ecp.bundles is not None
    return verify_bundle(unstructure(ecp.bundles.bundle("t", run_id))).verified


def consistent(ecp: Ecp, old: Checkpoint, new: Checkpoint) -> bool:
    assert ecp.transparency is not None
    proof = ecp.transparency.consistency("t", old.size, new.size)
    return verify_consistency(old.size, new.size, list(proof), old.root, new.root)


@pytest.mark.spec("C16 log-retention")
@settings(max_examples=8, deadline=None)
@given(runs=st.integers(min_value=1, max_value=4), erased=st.data())
def test_erasure_and_purge_keep_every_proof_and_the_purge_says_what_it_erased(runs, erased):
    ecp, clock = world()
    run_ids = [finished(ecp) for _ in range(runs)]
    before = checkpoint(ecp)
    assert all(bundle_verifies(ecp, run_id) for run_id in run_ids)

    asked = erased.draw(st.sampled_from(run_ids), label="erased on request")
    ecp.retention.request_erasure(ADMIN, ErasureRequest(run_id=asked, reason="subject request"))
    clock.advance(100)
    ecp.retention.put_policy(
        "t", RetentionPolicyRequest(audit_ttl_seconds=50, run_ttl_seconds=None)
    )
    swept = ecp.retention.sweep()

    after = checkpoint(ecp)
    assert after == before  # nothing left the log and nothing came in
    later = finished(ecp)
    newest = checkpoint(ecp)
    assert consistent(ecp, before, newest)
    assert all(bundle_verifies(ecp, run_id) for run_id in [*run_ids, later])
    timelines = {r: ecp.audit.timeline("t", r).entries for r in run_ids}
    assert all(entry.erased for entries in timelines.values() for entry in entries)

    log = ecp.retention.log("t", limit=100)
    named = [
        audit_id
        for entry in log
        if entry.step in {"audit_ttl_tombstone", "crypto_erase_audits"}
        for audit_id in entry.detail.get("audit_ids", [])
    ]
    every = {entry.audit_id for entries in timelines.values() for entry in entries}
    assert sorted(named) == sorted(every)  # each erased record named once, by its erasure
    tombstoned = [e for e in log if e.step == "audit_ttl_tombstone"]
    assert sum(len(e.detail["audit_ids"]) for e in tombstoned) == swept.records_tombstoned
    assert all(e.newly_erased == len(e.detail["audit_ids"]) for e in tombstoned)
