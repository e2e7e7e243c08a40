"""A tenant's digest version (ADR 0047): only that tenant, only records written after the switch.

These run the whole core in memory through the ``Ecp`` facade; the HTTP routes and PostgreSQL
are in tests/audit/test_http_audit_salts.py.
"""

import json
from datetime import UTC, datetime

import pytest
from tests.support.audit_doc import reference_verifier

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphDefinition,
    ServiceRole,
    StartRunRequest,
    structure,
)
from ecp_core.audit.settings import AuditSettings, AuditSettingsRequest
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.retention import ErasureRequest
from ecp_core.retention.model import RetentionPolicyRequest
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.wire import unstructure

pytestmark = [pytest.mark.unit, pytest.mark.spec("§9 audit-settings")]

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SIGNER = Ed25519Signer(bytes(range(5, 37)))
VERIFIER = reference_verifier()


def admin(tenant):
    return ActorIdentity(
        subject=f"admin@{tenant}",
        auth_method=AuthMethod.BEARER,
        roles=(ServiceRole.ADMIN,),
        tenant_id=tenant,
    )


@pytest.fixture
def clock():
    return FixedClock(START)


@pytest.fixture
def ecp(clock):
    service = Ecp.in_memory(signer=SIGNER, clock=clock, ids=SequentialIds("id"))
    for tenant in ("acme", "beta"):
        service.graphs.register(tenant, structure(EXAMPLE_GRAPH, GraphDefinition))
        service.graphs.deploy(
            tenant, CreateDeploymentRequest(deployment_ref="refunds", graph_id="refund-triage")
        )
    return service


def start_waiting(ecp, tenant):
    """Start the example run and drive it to its approval; return the run."""
    run, _ = ecp.runs.start(
        tenant, StartRunRequest(deployment_ref="refunds", input={"email": "ana@example.com"})
    )
    return ecp.runs.drive(tenant, run.run_id)


def approve(ecp, tenant, run):
    reviewer = ActorIdentity(subject="r", auth_method=AuthMethod.BEARER, tenant_id=tenant)
    decision = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, reason="ok")
    ecp.resolve(reviewer, "refunds", run.pending_approval_ids[0], decision)


def completed(ecp, tenant):
    run = start_waiting(ecp, tenant)
    approve(ecp, tenant, run)
    return run.run_id


def exported(ecp, tenant, run_id):
    return json.loads(json.dumps(unstructure(ecp.audit.timeline(tenant, run_id))))


def outsider_verifies(ecp, tenant, run_id, head=None):
    keys = json.loads(json.dumps([unstructure(key) for key in ecp.audit.signing_keys()]))
    timeline = exported(ecp, tenant, run_id)
    result = VERIFIER["verify_timeline"](timeline, keys, head)
    return result["verified"] and result["signature_verified"] is True, result


def versions(ecp, tenant, run_id):
    return [entry["digest_version"] for entry in exported(ecp, tenant, run_id)["entries"]]


def test_a_tenant_starts_on_version_2_and_the_choice_is_stored(ecp, clock):
    assert ecp.audit_settings.get("acme") == AuditSettings(tenant_id="acme", digest_version=2)
    clock.advance(5)
    chosen = ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=3))
    assert chosen == AuditSettings(
        tenant_id="acme",
        digest_version=3,
        updated_at=clock.now(),
        updated_by="admin@acme",
    )
    assert ecp.audit_settings.get("acme") == chosen
    assert ecp.audit_settings.get("beta").digest_version == 2


def test_switching_affects_only_that_tenant_and_only_new_records(ecp):
    before = completed(ecp, "acme")
    records_before = ecp.audit.timeline("acme", before).entries
    assert set(versions(ecp, "acme", before)) == {2}
    ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=3))
    after, other = completed(ecp, "acme"), completed(ecp, "beta")
    assert ecp.audit.timeline("acme", before).entries == records_before  # untouched
    assert set(versions(ecp, "acme", after)) == {3}
    assert set(versions(ecp, "beta", other)) == {2}
    salts = [entry.pii_salt for entry in ecp.audit.timeline("acme", after).entries]
    assert all(salt is not None and len(salt) == 64 for salt in salts)
    assert len(set(salts)) == len(salts)
    assert all(e.pii_salt is None for e in ecp.audit.timeline("beta", other).entries)
    for tenant, run_id in (("acme", before), ("acme", after), ("beta", other)):
        assert ecp.audit.verify_run(tenant, run_id).verified
        ok, result = outsider_verifies(ecp, tenant, run_id)
        assert ok, result


@pytest.mark.spec("§9 salted-commitments")
def test_a_run_that_spans_the_switch_chains_both_versions_and_switching_back_works(ecp):
    run = start_waiting(ecp, "acme")
    ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=3))
    approve(ecp, "acme", run)
    mixed = versions(ecp, "acme", run.run_id)
    assert mixed[0] == 2 and mixed[-1] == 3
    ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=2))
    back = completed(ecp, "acme")
    assert set(versions(ecp, "acme", back)) == {2}
    assert versions(ecp, "acme", run.run_id) == mixed
    result = ecp.audit.verify_run("acme", run.run_id)
    assert (result.verified, result.signature_verified) == (True, True)
    ok, outsider = outsider_verifies(ecp, "acme", run.run_id)
    assert ok, outsider


@pytest.mark.spec("§9 salt-erasure", "§9.1 erasure-steps")
def test_erasing_a_version_3_run_destroys_its_salts_and_keeps_verifying(ecp):
    ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=3))
    run_id = completed(ecp, "acme")
    before = exported(ecp, "acme", run_id)
    head = (len(before["entries"]), before["entries"][-1]["record_digest"])
    dpo = ActorIdentity(subject="dpo", auth_method=AuthMethod.BEARER, tenant_id="acme")
    report = ecp.retention.request_erasure(dpo, ErasureRequest(run_id=run_id, reason="gdpr"))
    assert report.runs[0].steps[0].newly_erased == len(before["entries"])
    after = exported(ecp, "acme", run_id)
    for old, new in zip(before["entries"], after["entries"], strict=True):
        assert old["pii_salt"] is not None
        assert new["pii_salt"] is None and new["erased"] is True
        for kept in ("record_digest", "pii_commitments", "signature", "digest_version"):
            assert new[kept] == old[kept]
    result = ecp.audit.verify_run("acme", run_id)
    assert (result.verified, result.signature_verified, result.record_count) == (
        True,
        True,
        len(before["entries"]),
    )
    ok, outsider = outsider_verifies(ecp, "acme", run_id, head)
    assert ok, outsider


@pytest.mark.spec("§9.1 ttl-clocks", "§9 salt-erasure")
def test_the_audit_ttl_tombstones_version_3_records_too(ecp, clock):
    ecp.audit_settings.put(admin("acme"), AuditSettingsRequest(digest_version=3))
    run_id = completed(ecp, "acme")
    ecp.retention.put_policy(
        "acme", RetentionPolicyRequest(audit_ttl_seconds=60, run_ttl_seconds=None)
    )
    clock.advance(61)
    report = ecp.retention.sweep()
    entries = ecp.audit.timeline("acme", run_id).entries
    assert report.records_tombstoned == len(entries)
    assert all(entry.erased and entry.pii_salt is None for entry in entries)
    assert ecp.audit.verify_run("acme", run_id).verified
