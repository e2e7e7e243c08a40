"""Retention rules: TTL validation, the policy resolution order, holds and TTL eligibility."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import ValidationFailed
from ecp_core.retention import (
    MAX_TTL_SECONDS,
    ConfiguredDefaults,
    LegalHold,
    RetentionPolicy,
    RetentionPolicyRequest,
    RetentionPolicySource,
    cutoff,
    held,
    resolve_policy,
    run_ttl_eligible,
)
from ecp_core.types import RunStatus
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

NOW = datetime(2026, 11, 22, tzinfo=UTC)
ttls = st.none() | st.integers(1, MAX_TTL_SECONDS)


def policy(tenant, audit, run, enabled=True):
    return RetentionPolicy(
        tenant_id=tenant,
        audit_ttl_seconds=audit,
        run_ttl_seconds=run,
        enabled=enabled,
        updated_at=NOW,
    )


@pytest.mark.spec("§2.8 retention-policy-rows")
@pytest.mark.parametrize("good", [1, 3600, MAX_TTL_SECONDS, None])
def test_valid_ttls(good):
    request = structure(
        {"audit_ttl_seconds": good, "run_ttl_seconds": good}, RetentionPolicyRequest
    )
    assert request.audit_ttl_seconds == good


@pytest.mark.spec("§7 ttl-validation")
@pytest.mark.parametrize(
    "bad", [0, -1, 1.5, 3600.0, True, False, "3600", MAX_TTL_SECONDS + 1, [], {}]
)
def test_invalid_ttls_are_refused_field_by_field(bad):
    with pytest.raises(ValidationFailed) as caught:
        structure({"audit_ttl_seconds": bad, "run_ttl_seconds": bad}, RetentionPolicyRequest)
    assert {e.loc for e in caught.value.errors} == {("audit_ttl_seconds",), ("run_ttl_seconds",)}


@pytest.mark.spec("§2.8 retention-policy-rows")
def test_both_ttls_must_be_stated():
    with pytest.raises(ValidationFailed) as caught:
        structure({}, RetentionPolicyRequest)
    assert {(e.loc, e.msg) for e in caught.value.errors} == {
        (("audit_ttl_seconds",), "required"),
        (("run_ttl_seconds",), "required"),
    }


@pytest.mark.spec("§9.1 policy-resolution")
@given(ttls, ttls, ttls, ttls, ttls, ttls, st.booleans(), st.booleans())
def test_resolution_order(t_audit, t_run, c_audit, c_run, s_audit, s_run, has_tenant, has_system):
    tenant_row = policy("acme", t_audit, t_run) if has_tenant else None
    system_row = policy("default", s_audit, s_run) if has_system else None
    configured = ConfiguredDefaults(audit_ttl_seconds=c_audit, run_ttl_seconds=c_run)
    resolved = resolve_policy("acme", tenant_row, configured, system_row)
    if has_tenant:
        expected = (RetentionPolicySource.TENANT, t_audit, t_run)
    elif c_audit is not None or c_run is not None:
        expected = (RetentionPolicySource.CONFIGURED_DEFAULT, c_audit, c_run)
    elif has_system:
        expected = (RetentionPolicySource.SYSTEM_DEFAULT, s_audit, s_run)
    else:
        expected = (RetentionPolicySource.SYNTHESIZED, None, None)
    assert (resolved.source, resolved.audit_ttl_seconds, resolved.run_ttl_seconds) == expected
    assert resolved.tenant_id == "acme"


@pytest.mark.spec("§9.1 policy-resolution")
def test_a_stored_null_means_forever_even_with_defaults():
    resolved = resolve_policy(
        "acme",
        policy("acme", None, None),
        ConfiguredDefaults(audit_ttl_seconds=60),
        policy("default", 5, 5),
    )
    assert (resolved.source, resolved.audit_ttl_seconds, resolved.run_ttl_seconds) == (
        RetentionPolicySource.TENANT,
        None,
        None,
    )


def hold(run_id=None, tenant="acme", released=False):
    return LegalHold(
        hold_id="h",
        tenant_id=tenant,
        reason="litigation",
        created_at=NOW,
        created_by="admin",
        run_id=run_id,
        released_at=NOW if released else None,
        released_by="admin" if released else None,
    )


@pytest.mark.spec("§2.8 legal-hold", "§3.3 legal-hold-blocks-erasure")
def test_holds():
    assert held([hold("r1")], "acme", "r1")
    assert not held([hold("r1")], "acme", "r2")
    assert held([hold(None)], "acme", "r2")
    assert held([hold(None)], "acme", None)
    assert not held([hold("r1")], "acme", None)
    assert not held([hold(None, tenant="globex")], "acme", "r1")
    assert not held([hold(None, released=True)], "acme", "r1")


@pytest.mark.spec("§3.3 ttl-terminal-runs-only")
@given(st.sampled_from(RunStatus), st.integers(-10_000, 10_000), ttls)
def test_only_terminal_runs_past_their_ttl_are_eligible(status, age_seconds, ttl):
    updated = NOW - timedelta(seconds=age_seconds)
    eligible = run_ttl_eligible(status, updated, cutoff(NOW, ttl))
    expected = (
        ttl is not None
        and status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED)  # ADR 0074
        and age_seconds > ttl
    )
    assert eligible is expected
