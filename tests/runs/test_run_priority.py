"""Priority within a tenant's dispatch, on the memory store through ``Ecp`` (ADR 0077).

Higher priority runs are dispatched first within their tenant, equal ones oldest first, and the
tenants still take turns.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.child_runs import TENANT, World

from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.errors import Conflict, ValidationFailed
from ecp_core.graphs import GraphBuilder
from ecp_core.runs.run.model import DEFAULT_PRIORITY, StartRunRequest
from ecp_core.wire import structure

pytestmark = [pytest.mark.unit, pytest.mark.spec("C14 priority")]

OTHER = "t-other"


def world_with(*tenants: str) -> World:
    """A service with deployment ``d`` (one action, then the end) in each tenant."""
    world = World()
    graph = (
        GraphBuilder("one")
        .action("a", "set", arguments={"values": {"a": 1}})
        .end("b")
        .chain("a", "b")
        .build()
    )
    for tenant in tenants:
        world.ecp.graphs.register(tenant, graph)
        world.ecp.graphs.deploy(tenant, CreateDeploymentRequest(deployment_ref="d", graph_id="one"))
    return world


@given(st.lists(st.integers(0, 9), min_size=1, max_size=8))
def test_a_tenants_runs_are_dispatched_highest_priority_first_then_oldest(
    priorities: list[int],
) -> None:
    world = world_with(TENANT)
    started = [
        world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d", priority=p))[0]
        for p in priorities
    ]
    order = []
    while (moved := world.ecp.runs.advance_next()) is not None:
        if moved.run_id not in order:
            order.append(moved.run_id)
    expected = sorted(started, key=lambda run: (-run.priority, run.run_id))
    assert order == [run.run_id for run in expected]


def test_tenants_still_take_turns_whatever_the_priorities() -> None:
    world = world_with(TENANT, OTHER)
    urgent = [
        world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="d", priority=9))[0]
        for _ in range(3)
    ]
    calm = world.ecp.runs.start(OTHER, StartRunRequest(deployment_ref="d", priority=0))[0]
    first_two = [world.ecp.runs.advance_next(), world.ecp.runs.advance_next()]
    assert {run.run_id for run in first_two if run is not None} == {urgent[0].run_id, calm.run_id}


def test_priority_is_0_to_9_and_5_when_left_out() -> None:
    assert StartRunRequest(deployment_ref="d").priority == DEFAULT_PRIORITY == 5
    for wrong in (-1, 10):
        with pytest.raises(ValidationFailed) as refused:
            structure({"deployment_ref": "d", "priority": wrong}, StartRunRequest)
        assert [e.loc for e in refused.value.errors] == [("priority",)]


def test_the_same_idempotent_start_with_another_priority_is_a_conflict() -> None:
    world = world_with(TENANT)
    first, created = world.ecp.runs.start(
        TENANT, StartRunRequest(deployment_ref="d", idempotency_key="k", priority=7)
    )
    assert created
    again, created = world.ecp.runs.start(
        TENANT, StartRunRequest(deployment_ref="d", idempotency_key="k", priority=7)
    )
    assert (again.run_id, created) == (first.run_id, False)
    with pytest.raises(Conflict):
        world.ecp.runs.start(
            TENANT, StartRunRequest(deployment_ref="d", idempotency_key="k", priority=2)
        )
