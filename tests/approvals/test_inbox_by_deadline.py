"""``ApprovalService.inbox``: a person's pending approvals, the soonest SLA first, in keyset pages.

On the memory store through the ``Ecp`` facade; both stores' order is the approval repository's
conformance suite (``pending_by_deadline``).
"""

import pytest
from tests.support.child_runs import TENANT, World

from ecp_core.errors import ValidationFailed
from ecp_core.graphs import GraphBuilder
from ecp_core.identity import ActorIdentity
from ecp_core.pages import encode_cursor
from ecp_core.runs.approvals.service import DEADLINE_CURSOR
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.types import AuthMethod, ServiceRole

pytestmark = pytest.mark.unit

ANN = ActorIdentity(
    subject="ann", auth_method=AuthMethod.BEARER, roles=(ServiceRole.APPROVER,), tenant_id=TENANT
)


def deploy(world: World, ref: str, sla_seconds: int | None) -> None:
    graph = (
        GraphBuilder(ref)
        .approval("review", summary="Check it", rationale="Because", sla_seconds=sla_seconds)
        .end("done")
        .chain("review", "done")
        .build()
    )
    world.deploy(ref, graph)


def waiting(world: World, ref: str) -> str:
    run, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref=ref))
    world.settle()
    return world.ecp.runs.get(TENANT, run.run_id).pending_approval_ids[0]


@pytest.mark.spec("C15 console-inbox")
def test_the_soonest_sla_comes_first_across_pages_and_none_last() -> None:
    world = World()
    deploy(world, "none", None)
    deploy(world, "hour", 3600)
    deploy(world, "minute", 60)
    first_none, hour, minute, second_none = (
        waiting(world, "none"),
        waiting(world, "hour"),
        waiting(world, "minute"),
        waiting(world, "none"),
    )
    seen, cursor = [], None
    while True:
        page, cursor = world.ecp.approvals.inbox(ANN, limit=1, cursor=cursor)
        seen += [approval.approval_id for approval in page]
        if cursor is None:
            break
    assert seen == [minute, hour, first_none, second_none]
    only, last = world.ecp.approvals.inbox(ANN, limit=10, deployment_ref="none")
    assert [a.approval_id for a in only] == [first_none, second_none]
    assert last is None


@pytest.mark.spec("C15 console-inbox")
def test_a_cursor_this_service_did_not_write_is_invalid() -> None:
    world = World()
    for forged in ("garbage", encode_cursor(DEADLINE_CURSOR, "yesterday", "ap-1")):
        with pytest.raises(ValidationFailed):
            world.ecp.approvals.inbox(ANN, cursor=forged)
