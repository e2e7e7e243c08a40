"""Approvers approving at once, on PostgreSQL (ADR 0075).

Every vote is counted under its run's lock: no vote is lost, and of several approvals that could
each be the last one needed, exactly one moves the run on.
"""

import functools

import pytest
from tests.support.together import together

from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import ApprovalAlreadyResolved
from ecp_core.graphs import ApprovalRules
from ecp_core.runs.approvals.model import ApprovalResolutionRequest, ApprovalResolutionResponse
from ecp_core.types import ApprovalDecision, ApprovalStatus, AttemptStatus, RunStatus, ServiceRole

pytestmark = [pytest.mark.integration, pytest.mark.spec("C14 four-eyes")]

SIGNER = Ed25519Signer(bytes(range(72, 104)), key_id="approval-races")
TENANT = "t"
APPROVE = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
ROUNDS = 8


def approver(subject: str) -> ActorIdentity:
    return ActorIdentity(
        subject=subject,
        auth_method=AuthMethod.BEARER,
        tenant_id=TENANT,
        roles=(ServiceRole.APPROVER,),
    )


def deploy(ecp: Ecp, ref: str, min_approvals: int) -> None:
    graph = (
        GraphBuilder(f"g{min_approvals}")
        .approval(
            "review",
            summary="Check",
            rationale="Several people decide",
            rules=ApprovalRules(min_approvals=min_approvals),
        )
        .end("done")
        .chain("review", "done")
        .build()
    )
    ecp.graphs.register(TENANT, graph)
    ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref=ref, graph_id=graph.graph_id))


def waiting_run(ecp: Ecp, ref: str) -> tuple[str, str]:
    run, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref=ref), started_by="maker")
    run = ecp.runs.drive(TENANT, run.run_id)
    assert run.status is RunStatus.WAITING_APPROVAL
    return run.run_id, run.pending_approval_ids[0]


def counts(ecp: Ecp, run_id: str) -> list[int]:
    entries = ecp.audit.timeline(TENANT, run_id).entries
    return [
        e.execution_metadata["approval_count"]
        for e in entries
        if e.status == AttemptStatus.APPROVED
    ]


def test_three_approvers_at_once_on_two_needed_count_exactly_two(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    deploy(ecp, "two", 2)
    for _ in range(ROUNDS):
        run_id, approval_id = waiting_run(ecp, "two")
        answers = together(
            *(
                functools.partial(ecp.resolve, approver(who), "two", approval_id, APPROVE)
                for who in ("ann", "ben", "cat")
            )
        )
        given = [a for a in answers if isinstance(a, ApprovalResolutionResponse)]
        refused = [a for a in answers if not isinstance(a, ApprovalResolutionResponse)]
        assert len(given) == 2, answers
        assert all(isinstance(e, ApprovalAlreadyResolved) for e in refused), refused
        assert sorted(len(a.approval.approvals) for a in given) == [1, 2]
        approval = ecp.approvals.get(TENANT, approval_id)
        assert approval.status is ApprovalStatus.RESOLVED
        assert len({g.actor.subject for g in approval.approvals}) == 2
        assert counts(ecp, run_id) == [1, 2]
        assert ecp.runs.drive(TENANT, run_id).status is RunStatus.COMPLETED
        assert ecp.audit.verify_run(TENANT, run_id).verified


def test_two_approvers_at_once_on_three_needed_both_count(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    deploy(ecp, "three", 3)
    for _ in range(ROUNDS):
        run_id, approval_id = waiting_run(ecp, "three")
        answers = together(
            *(
                functools.partial(ecp.resolve, approver(who), "three", approval_id, APPROVE)
                for who in ("ann", "ben")
            )
        )
        assert all(isinstance(a, ApprovalResolutionResponse) for a in answers), answers
        approval = ecp.approvals.get(TENANT, approval_id)
        assert approval.status is ApprovalStatus.PENDING
        assert sorted(g.actor.subject for g in approval.approvals) == ["ann", "ben"]
        assert counts(ecp, run_id) == [1, 2]
        ecp.resolve(approver("cat"), "three", approval_id, APPROVE)
        assert ecp.runs.drive(TENANT, run_id).status is RunStatus.COMPLETED
        assert counts(ecp, run_id) == [1, 2, 3]
