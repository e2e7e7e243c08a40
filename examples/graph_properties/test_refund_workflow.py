"""Property tests of an application's own graph: a refund that a person approves.

``lookup`` sets the case, ``review`` waits for a reviewer, ``refund`` calls the payment provider
(it declares the ``network_write`` capability), ``done`` ends. Whatever the input, the reviewer's
decision and the deployment policy, a run ends in a terminal state or waits for the reviewer;
a rejected or policy-denied refund never runs; and the audit chain always verifies.

Run: ``pytest examples/graph_properties``.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    Capability,
    CreateDeploymentRequest,
    DeploymentPolicyRequest,
    Ecp,
    GraphBuilder,
    RunPublicStatus,
    RunStatus,
    StartRunRequest,
)
from ecp_core.testing.strategies.graphs import approval_decisions, deny_sets, run_inputs
from ecp_core.types import AttemptStatus

TENANT = "shop"
REVIEWER = ActorIdentity(subject="reviewer", auth_method=AuthMethod.BEARER, tenant_id=TENANT)
REFUND = (
    GraphBuilder("refund")
    .action("lookup", "set", arguments={"values": {"case": "open"}})
    .approval("review", summary="Refund the order?", rationale="Refunds need a person")
    .action("refund", "echo", capabilities=(Capability.NETWORK_WRITE,))
    .end("done")
    .chain("lookup", "review", "refund", "done")
    .build()
)
TERMINAL = {RunStatus.COMPLETED, RunStatus.FAILED}


def deployed(denied: frozenset[Capability]) -> Ecp:
    """A fresh in-memory ECP with the refund graph deployed under a policy denying ``denied``."""
    ecp = Ecp.in_memory()
    ecp.graphs.register(TENANT, REFUND)
    ecp.graphs.deploy(TENANT, CreateDeploymentRequest(deployment_ref="refunds", graph_id="refund"))
    if denied:
        ecp.graphs.put_policy(
            TENANT, "refunds", DeploymentPolicyRequest(deny_capabilities=tuple(sorted(denied)))
        )
    return ecp


def ran(ecp: Ecp, run_id: str, node_id: str) -> bool:
    """Whether the node's action ran (an attempt of it succeeded)."""
    return any(
        record.node_id == node_id and record.status is AttemptStatus.SUCCEEDED
        for record in ecp.audit.timeline(TENANT, run_id).entries
    )


@settings(max_examples=40, deadline=None)
@given(payload=run_inputs, decision=approval_decisions, denied=deny_sets())
def test_a_run_ends_or_waits_for_the_reviewer_and_only_an_allowed_approved_refund_runs(
    payload, decision, denied
):
    ecp = deployed(denied)
    started, _ = ecp.runs.start(TENANT, StartRunRequest(deployment_ref="refunds", input=payload))
    run = ecp.runs.drive(TENANT, started.run_id)
    # Before anyone decides, the run waits for the reviewer and nothing was refunded.
    assert run.status is RunStatus.WAITING_APPROVAL
    assert not ran(ecp, run.run_id, "refund")

    request = ApprovalResolutionRequest(decision=decision, reason="checked")
    ecp.resolve(REVIEWER, "refunds", run.pending_approval_ids[0], request)
    run = ecp.runs.drive(TENANT, run.run_id)

    assert run.status in TERMINAL
    allowed = Capability.NETWORK_WRITE not in denied
    approved = decision is ApprovalDecision.APPROVE
    assert ran(ecp, run.run_id, "refund") == (approved and allowed)
    assert (run.status is RunStatus.COMPLETED) == (approved and allowed)
    if approved and not allowed:
        assert run.public_status is RunPublicStatus.TERMINATED_BY_POLICY
    assert ecp.audit.verify_run(TENANT, run.run_id).verified


@settings(max_examples=20, deadline=None)
@given(payloads=st.lists(run_inputs, min_size=1, max_size=4), denied=deny_sets())
def test_runs_of_one_deployment_never_see_each_others_input(payloads, denied):
    ecp = deployed(denied)
    runs = [
        ecp.runs.start(TENANT, StartRunRequest(deployment_ref="refunds", input=payload))[0]
        for payload in payloads
    ]
    for run, payload in zip(runs, payloads, strict=True):
        driven = ecp.runs.drive(TENANT, run.run_id)
        mine = {k: v for k, v in payload.items() if k != "case"}  # "case" is the graph's own
        assert {k: driven.state[k] for k in mine} == mine
