"""Child runs through erasure and legal holds, on the memory store (ADR 0046).

A hold on a parent covers its descendants: erasing the parent or a child is refused with 409
(``LegalHoldActive``) and the TTL purge skips both. Released, erasing the parent erases the child
too, each step in the retention log; the records are crypto-erased and every chain still
verifies. A child whose parent has not ended is never TTL-erased.
"""

import pytest
from tests.support.child_runs import ACTOR, TENANT, World, calling, leaf

from ecp_core.errors import LegalHoldActive
from ecp_core.graphs import GraphBuilder
from ecp_core.retention.model import CreateLegalHoldRequest, ErasureRequest, RetentionPolicyRequest
from ecp_core.runs.run.model import Run
from ecp_core.types import RunStatus

pytestmark = pytest.mark.unit

TTL = 60


def tree(world: World) -> tuple[Run, Run, Run]:
    """A completed parent → child → grandchild, with personal data in each state."""
    world.deploy("leaf", leaf())
    world.deploy("mid", calling("mid", "leaf"))
    world.deploy("top", calling("top", "mid"))
    top = world.run_to_rest("top", {"email": "ada@example.com"})
    (mid,) = world.children(top.run_id)
    (grandchild,) = world.children(mid.run_id)
    assert {r.status for r in (top, mid, grandchild)} == {RunStatus.COMPLETED}
    return top, mid, grandchild


def erase(world: World, run_id: str) -> int:
    report = world.ecp.retention.request_erasure(
        ACTOR, ErasureRequest(reason="subject request", run_id=run_id)
    )
    return report.newly_erased


def erased(world: World, run_id: str) -> bool:
    return all(record.erased for record in world.records(run_id))


@pytest.mark.spec("§3.3 hold-covers-descendants", "§3.3 legal-hold-blocks-erasure")
def test_a_hold_on_the_parent_covers_the_tree_until_released() -> None:
    world = World()
    top, mid, grandchild = tree(world)
    hold = world.ecp.retention.place_hold(
        ACTOR, CreateLegalHoldRequest(reason="litigation", run_id=top.run_id)
    )
    for run in (top, mid, grandchild):
        with pytest.raises(LegalHoldActive):
            erase(world, run.run_id)
    world.ecp.retention.put_policy(
        TENANT, RetentionPolicyRequest(audit_ttl_seconds=TTL, run_ttl_seconds=TTL)
    )
    world.clock.advance(TTL * 10)
    report = world.ecp.retention.sweep()
    assert (report.runs_erased, report.records_tombstoned) == (0, 0)
    for run in (top, mid, grandchild):
        assert not any(r.erased for r in world.records(run.run_id))
        assert world.ecp.runs.get(TENANT, run.run_id).erased_at is None

    world.ecp.retention.release_hold(ACTOR, hold.hold_id)
    world.ecp.retention.put_policy(
        TENANT, RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=None)
    )
    assert erase(world, top.run_id) > 0
    for run in (top, mid, grandchild):
        assert erased(world, run.run_id)
        assert world.ecp.runs.get(TENANT, run.run_id).erased_at is not None
        assert world.ecp.runs.get(TENANT, run.run_id).output is None
        assert world.verified(run.run_id)
    logged = {entry.run_id for entry in world.ecp.retention.log(TENANT, limit=500)}
    assert {top.run_id, mid.run_id, grandchild.run_id} <= logged
    assert erase(world, top.run_id) == 0


@pytest.mark.spec("§3.3 hold-covers-descendants")
def test_a_hold_on_a_child_covers_it_and_below_and_refuses_erasing_the_parent_s_tree() -> None:
    """Erasing a tree checks every member first: a held child refuses the whole request."""
    world = World()
    top, mid, grandchild = tree(world)
    world.ecp.retention.place_hold(
        ACTOR, CreateLegalHoldRequest(reason="litigation", run_id=mid.run_id)
    )
    with pytest.raises(LegalHoldActive):
        erase(world, top.run_id)
    with pytest.raises(LegalHoldActive):
        erase(world, grandchild.run_id)
    for run in (top, mid, grandchild):
        assert not any(r.erased for r in world.records(run.run_id))


@pytest.mark.spec("§3.3 hold-covers-descendants", "§3.3 ttl-terminal-runs-only")
def test_a_child_of_a_parent_that_has_not_ended_is_never_ttl_erased() -> None:
    world = World()
    world.deploy("leaf", leaf())
    waiting = (
        GraphBuilder("top")
        .subgraph("call", "leaf")
        .interrupt("ask")
        .end("done")
        .chain("call", "ask", "done")
        .build()
    )
    world.deploy("top", waiting)
    top = world.run_to_rest("top")
    assert top.status is RunStatus.WAITING_INTERRUPT
    (child,) = world.children(top.run_id)
    assert child.status is RunStatus.COMPLETED
    world.ecp.retention.put_policy(
        TENANT, RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=TTL)
    )
    world.clock.advance(TTL * 10)
    assert world.ecp.retention.sweep().runs_erased == 0
    assert world.ecp.runs.get(TENANT, child.run_id).erased_at is None

    world.ecp.runs.resume(TENANT, top.run_id, "yes")
    world.settle()
    assert world.ecp.runs.get(TENANT, top.run_id).status is RunStatus.COMPLETED
    world.clock.advance(TTL * 10)
    assert world.ecp.retention.sweep().runs_erased == 2
    for run in (top, child):
        assert world.ecp.runs.get(TENANT, run.run_id).erased_at is not None
        assert erased(world, run.run_id)
        assert world.verified(run.run_id)
