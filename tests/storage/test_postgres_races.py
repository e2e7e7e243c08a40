"""Identical requests racing each other all succeed with the same result."""

import concurrent.futures

import pytest

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.errors import Conflict, ValidationFailed

pytestmark = pytest.mark.integration

SIGNER = Ed25519Signer(bytes(range(9, 41)), key_id="race")
GRAPH = GraphBuilder("g").action("a", "echo").end("b").chain("a", "b").build()


def race(count, call):
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


@pytest.mark.spec("C3 graph-registration", "C3 run-idempotency")
def test_identical_registrations_deployments_and_keyed_starts(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    registrations = race(6, lambda: ecp.graphs.register("t", GRAPH))
    assert {(r.graph_id, r.version) for r in registrations} == {("g", 1)}
    assert sum(r.created for r in registrations) == 1
    deployments = race(
        6, lambda: ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    )
    assert {d.graph_version_ref for d, _ in deployments} == {"g@1"}
    assert sum(created for _, created in deployments) == 1
    request = StartRunRequest(deployment_ref="d", input={"n": 1}, idempotency_key="k-1")
    starts = race(8, lambda: ecp.runs.start("t", request))
    assert len({run.run_id for run, _ in starts}) == 1
    assert sum(created for _, created in starts) == 1
    with pytest.raises(Conflict):
        ecp.runs.start(
            "t", StartRunRequest(deployment_ref="d", input={"n": 2}, idempotency_key="k-1")
        )


@pytest.mark.spec("C3 graph-registration")
def test_different_graphs_racing_for_the_next_version_all_land(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    graphs = [GraphBuilder("g").action("a", "echo", arguments={"i": i}).build() for i in range(4)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        versions = sorted(
            r.version for r in pool.map(lambda g: ecp.graphs.register("t", g), graphs)
        )
    assert versions == [1, 2, 3, 4]


@pytest.mark.spec("C1 list-paging")
@pytest.mark.parametrize("cursor", ["%%%", "bm90LW91cnM", "cnVuczo"])
def test_cursors_the_service_did_not_issue_are_refused(postgres_store, cursor):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=SIGNER)
    with pytest.raises(ValidationFailed):
        ecp.runs.page("t", limit=5, cursor=cursor)
