"""A rollout on PostgreSQL: 2,000 subjects at 90/10 verify; an arm starved by SQL does not."""

import threading

import psycopg
import pytest

from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.errors import Conflict
from ecp_core.graphs import GraphBuilder
from ecp_core.rollouts.model import ArmRequest, CreateRolloutRequest, RolloutUnit
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer

pytestmark = pytest.mark.integration


@pytest.mark.spec("C17 rollout-verify", "C17 rollout-assign")
def test_a_fair_rollout_verifies_and_a_starved_arm_is_flagged(postgres_store, fresh_database):
    ecp = Ecp.build(
        postgres_store.unit_of_work,
        signer=Ed25519Signer(bytes(range(32)), key_id="k"),
        rollout_keys=lambda: "00" * 32,  # a repeatable assignment: "fair" is always fair
    )
    for summary in ("one", "two"):
        definition = GraphBuilder("g").approval("a", summary=summary, rationale="r").end("b")
        ecp.graphs.register("t1", definition.chain("a", "b").build())
    ecp.graphs.deploy(
        "t1", CreateDeploymentRequest(deployment_ref="d", graph_id="g", graph_version=1)
    )
    arms = (
        ArmRequest(graph_version_ref="g@1", weight=90),
        ArmRequest(graph_version_ref="g@2", weight=10),
    )
    rollout = ecp.rollouts.create(
        "t1", CreateRolloutRequest(deployment_ref="d", arms=arms, unit=RolloutUnit.SUBJECT)
    )
    counts = [0, 0]
    for n in range(2_000):
        counts[ecp.rollouts.assign("t1", rollout.rollout_id, f"subject-{n}").arm] += 1
    fair = ecp.rollouts.verify("t1", rollout.rollout_id)
    assert [a.observed for a in fair.arms] == counts
    assert fair.homogeneous is True
    assert fair.sample_ratio_p_value >= 0.001
    # Starve arm 1 behind the service's back, as a superuser would.
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(
            "UPDATE ecp_rollout_assignments SET arm = 0 WHERE rollout_id = %s AND arm = 1"
            " AND unit_id IN (SELECT unit_id FROM ecp_rollout_assignments"
            " WHERE rollout_id = %s AND arm = 1 ORDER BY unit_id LIMIT %s)",
            (rollout.rollout_id, rollout.rollout_id, counts[1] * 3 // 4),
        )
    starved = ecp.rollouts.verify("t1", rollout.rollout_id)
    assert starved.arms[1].observed == counts[1] - counts[1] * 3 // 4
    assert starved.homogeneous is False
    assert starved.sample_ratio_p_value < 0.001


@pytest.mark.spec("C17 rollout-create")
def test_concurrent_creates_for_one_deployment_leave_one_active(postgres_store):
    """Eight threads create a rollout of one deployment at once: one wins, seven get Conflict."""
    ecp = Ecp.build(postgres_store.unit_of_work, signer=Ed25519Signer(bytes(range(32)), key_id="k"))
    definition = GraphBuilder("g").approval("a", summary="s", rationale="r").end("b")
    ecp.graphs.register("t1", definition.chain("a", "b").build())
    ecp.graphs.deploy("t1", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    request = CreateRolloutRequest(
        deployment_ref="d", arms=(ArmRequest(graph_version_ref="g@1", weight=100),)
    )
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def create() -> None:
        start.wait(10)
        try:
            ecp.rollouts.create("t1", request)
            outcomes.append("created")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 7 + ["created"]
