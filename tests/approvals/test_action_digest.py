"""The approval's ``action_digest`` on the memory store, through the ``Ecp`` facade (ADR 0080).

A resolution that names the digest it was shown resolves only while the approval is as shown:
an escalation, a withdrawal or another approver's vote since makes it ``ApprovalChanged`` and
nothing is written. Without a digest, resolving is as before.
"""

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.child_runs import TENANT, World

from ecp_core.errors import ApprovalChanged, ValidationFailed
from ecp_core.graphs import ApprovalRules, GraphBuilder
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.model import (
    ApprovalResolution,
    ApprovalResolutionRequest,
    action_digest,
)
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.types import ApprovalDecision, ApprovalStatus, AuthMethod, RunStatus, ServiceRole
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

RULE = "C15 action-digest"


def person(subject: str) -> ActorIdentity:
    return ActorIdentity(
        subject=subject,
        auth_method=AuthMethod.BEARER,
        tenant_id=TENANT,
        roles=(ServiceRole.APPROVER,),
    )


BOB, CAROL = person("bob"), person("carol")


def waiting(*, sla_seconds: int | None = None, min_approvals: int = 1) -> tuple[World, str, str]:
    """A world with one run waiting on its approval: the world, the run id, the approval id."""
    world = World()
    graph = (
        GraphBuilder("digest")
        .approval(
            "review",
            summary="Check it",
            rationale="Because",
            sla_seconds=sla_seconds,
            rules=ApprovalRules(min_approvals=min_approvals),
        )
        .end("done")
        .chain("review", "done")
        .build()
    )
    world.deploy("g", graph)
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="g", input={"amount": 10}))
    world.settle()
    (approval_id,) = world.ecp.runs.get(TENANT, run.run_id).pending_approval_ids
    return world, run.run_id, approval_id


def approve(digest: str | None) -> ApprovalResolutionRequest:
    return ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE, action_digest=digest)


@pytest.mark.spec(RULE)
def test_the_digest_shown_resolves_and_the_run_moves_on() -> None:
    world, run_id, approval_id = waiting()
    shown = world.ecp.approvals.get(TENANT, approval_id)
    assert shown.action_digest.startswith("sha256:")
    assert shown.action_digest == action_digest(shown)
    approval = world.ecp.resolve(BOB, "g", approval_id, approve(shown.action_digest)).approval
    assert approval.status is ApprovalStatus.RESOLVED
    assert approval.action_digest != shown.action_digest  # resolving changed it too
    world.settle()
    assert world.ecp.runs.get(TENANT, run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(RULE)
def test_after_an_escalation_the_digest_shown_resolves_nothing() -> None:
    world, run_id, approval_id = waiting(sla_seconds=60)
    shown = world.ecp.approvals.get(TENANT, approval_id).action_digest
    world.clock.advance(120)
    (fresh,) = world.ecp.approvals.escalate_overdue()
    records = len(world.records(run_id))
    with pytest.raises(ApprovalChanged):
        world.ecp.resolve(BOB, "g", approval_id, approve(shown))
    assert world.ecp.approvals.get(TENANT, approval_id).status is ApprovalStatus.ESCALATED
    assert world.ecp.approvals.get(TENANT, fresh.approval_id).status is ApprovalStatus.PENDING
    assert len(world.records(run_id)) == records  # nothing written
    world.ecp.resolve(BOB, "g", fresh.approval_id, approve(fresh.action_digest))
    world.settle()
    assert world.ecp.runs.get(TENANT, run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(RULE)
def test_after_another_approvers_vote_the_digest_shown_resolves_nothing() -> None:
    world, run_id, approval_id = waiting(min_approvals=3)
    shown = world.ecp.approvals.get(TENANT, approval_id).action_digest
    world.ecp.resolve(BOB, "g", approval_id, approve(shown))
    records = len(world.records(run_id))
    with pytest.raises(ApprovalChanged):
        world.ecp.resolve(CAROL, "g", approval_id, approve(shown))
    now = world.ecp.approvals.get(TENANT, approval_id)
    assert [given.actor.subject for given in now.approvals] == ["bob"]
    assert len(world.records(run_id)) == records
    world.ecp.resolve(CAROL, "g", approval_id, approve(now.action_digest))  # read again: it goes
    assert world.ecp.runs.get(TENANT, run_id).status is RunStatus.WAITING_APPROVAL


@pytest.mark.spec(RULE)
def test_without_a_digest_resolving_is_as_before_and_a_malformed_one_is_invalid() -> None:
    world, _, approval_id = waiting()
    with pytest.raises(ValidationFailed):
        structure({"decision": "approve", "action_digest": "md5:abc"}, ApprovalResolutionRequest)
    approval = world.ecp.resolve(BOB, "g", approval_id, approve(None)).approval
    assert approval.status is ApprovalStatus.RESOLVED


@pytest.mark.spec(RULE)
def test_the_digest_is_computed_from_the_record_whatever_was_given() -> None:
    world, _, approval_id = waiting()
    approval = world.ecp.approvals.get(TENANT, approval_id)
    data = unstructure(approval)
    assert data["action_digest"] == approval.action_digest
    assert structure({**data, "action_digest": "forged"}, type(approval)) == approval
    assert attrs.evolve(approval, action_digest="forged").action_digest == approval.action_digest


texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=5)
payloads = st.dictionaries(texts, st.integers(-10, 10) | texts, max_size=3)


@pytest.mark.spec(RULE)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    payload=payloads,
    edited=payloads,
    status=st.sampled_from(ApprovalStatus),
    summary=st.text(min_size=1, max_size=10),
)
def test_the_digest_changes_with_what_is_decided_and_only_with_it(
    payload, edited, status, summary
) -> None:
    """Status, payload and the approvals so far change it; summary and SLA do not."""
    world, _, approval_id = waiting()
    base = attrs.evolve(world.ecp.approvals.get(TENANT, approval_id), proposed_payload=payload)
    assert attrs.evolve(base, summary=summary, sla_deadline=None).action_digest == (
        base.action_digest
    )
    if status is not base.status:
        assert attrs.evolve(base, status=status).action_digest != base.action_digest
    vote = ApprovalResolution(
        decision=ApprovalDecision.EDIT_AND_APPROVE,
        actor=BOB,
        resolved_at=base.created_at,
        edited_payload=edited,
    )
    voted = attrs.evolve(base, approvals=(vote,))
    assert voted.action_digest != base.action_digest
    if edited != payload:
        assert attrs.evolve(base, proposed_payload=edited).action_digest != base.action_digest
