"""The facts a certification's evaluation reads, from the real services on the memory store.

A tampered audit record of a recent run blocks the build whatever the override; a server that
cannot sign blocks it too; the attestation counts only while in force and only for the
deployed graph version; runs of other deployments are not looked at.
"""

from datetime import timedelta

import pytest
from tests.support.certification import ADMIN, World

from ecp_core.certification.model import (
    CertificationOverrideRequest,
    CreateCertificationRequest,
    OverrideScope,
)
from ecp_core.certification_facts import AUDITED_RUNS

pytestmark = pytest.mark.unit


def test_a_ready_deployment_is_production_ready():
    world = World()
    world.run()
    assert world.codes() == []


@pytest.mark.spec("§2.5 certification-evaluation")
def test_a_tampered_chain_blocks_and_no_override_waives_it():
    world = World()
    broken = world.run()
    world.run()
    world.tamper(broken)
    every_scope = tuple(OverrideScope)
    world.ecp.certifications.grant_override(
        ADMIN,
        world.certification_id,
        CertificationOverrideRequest(
            scopes=every_scope, reason="try", expires_at=world.clock.now() + timedelta(days=1)
        ),
    )
    answer = world.ecp.certifications.get("acme", world.certification_id)
    [blocker] = answer.evaluation.blockers
    assert blocker.code == "audit_chain_broken"
    assert blocker.overridable is False
    assert broken in blocker.message
    assert answer.evaluation.override_active is True
    assert answer.evaluation.test_deployable is False


def test_runs_of_other_deployments_and_older_runs_are_not_examined():
    world = World()
    world.tamper(world.run("other"))
    assert world.codes() == []
    oldest = world.run()
    for _ in range(AUDITED_RUNS):
        world.run()
    world.tamper(oldest)
    assert world.codes() == []  # beyond the bound of recent runs


def test_a_server_without_a_signing_key_is_blocked():
    world = World(signer=False)
    assert world.codes() == ["signer_unavailable"]


@pytest.mark.parametrize(
    ("attested", "minutes", "blocked"),
    [
        ("pay@1", 0, False),
        ("1", 14, False),
        ("pay@1", 15, True),
        ("pay@2", 0, True),
        ("2", 0, True),
    ],
)
def test_the_attestation_counts_while_in_force_for_the_deployed_version(attested, minutes, blocked):
    world = World(attested=attested)
    world.clock.advance(minutes * 60)
    assert ("attestation_missing" in world.codes()) is blocked


def test_no_deployment_and_no_policy_are_blockers():
    world = World()
    with world.store.unit_of_work() as tx:
        assert tx.policies.get("acme", "other") is None
    answer, _ = world.ecp.certifications.create(
        ADMIN,
        CreateCertificationRequest(
            app_name="shop",
            app_commit="def",
            image_digest="sha256:" + "d" * 64,
            deployment_ref="other",
        ),
    )
    assert [b.code for b in answer.evaluation.blockers] == ["policy_missing", "attestation_missing"]
    assert answer.evaluation.test_deployable is True
    missing, _ = world.ecp.certifications.create(
        ADMIN,
        CreateCertificationRequest(
            app_name="shop",
            app_commit="ghi",
            image_digest="sha256:" + "e" * 64,
            deployment_ref="nowhere",
        ),
    )
    assert [b.code for b in missing.evaluation.blockers] == ["deployment_missing"]
