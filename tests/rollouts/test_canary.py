"""An end-to-end canary on PostgreSQL: 2,000 runs at 90/10, verified, then one arm promoted."""

from collections import Counter

import pytest

from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.graphs import GraphBuilder
from ecp_core.rollouts.model import ArmRequest, CreateRolloutRequest, RolloutUnit
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.types import RunStatus

pytestmark = pytest.mark.integration

RUNS = 2_000


def priced(cost: str):
    """Graph ``priced`` whose one action records ``cost`` in the run's state."""
    return (
        GraphBuilder("priced")
        .action("price", "set", arguments={"values": {"cost": cost}})
        .end("done")
        .chain("price", "done")
        .build()
    )


@pytest.mark.spec("C17 rollout-assign", "C17 rollout-verify", "C17 rollout-end")
def test_a_90_10_canary_runs_verifies_and_promotes(postgres_store):
    ecp = Ecp.build(postgres_store.unit_of_work, signer=Ed25519Signer(bytes(range(32)), key_id="k"))
    for cost in ("0.10", "0.04"):
        ecp.graphs.register("t1", priced(cost))
    ecp.graphs.deploy(
        "t1", CreateDeploymentRequest(deployment_ref="pay", graph_id="priced", graph_version=1)
    )
    arms = (
        ArmRequest(graph_version_ref="priced@1", weight=90),
        ArmRequest(graph_version_ref="priced@2", weight=10),
    )
    rollout = ecp.rollouts.create(
        "t1", CreateRolloutRequest(deployment_ref="pay", arms=arms, unit=RolloutUnit.RUN)
    )
    costs: Counter[tuple[int | None, str]] = Counter()
    first = None
    for _ in range(RUNS):
        run, _ = ecp.runs.start_and_drive("t1", StartRunRequest(deployment_ref="pay"))
        assert run.status is RunStatus.COMPLETED
        assert run.rollout_id == rollout.rollout_id
        assert run.graph_version_ref == rollout.arms[run.arm].graph_version_ref
        costs[run.arm, run.state["cost"]] += 1
        first = first or run
    assert set(costs) == {(0, "0.10"), (1, "0.04")}  # each arm ran its own version
    _, _, records = ecp.audit.run_records("t1", first.run_id)
    said = records[0].execution_metadata["rollout"]
    assert (said["rollout_id"], said["arm"]) == (rollout.rollout_id, first.arm)
    assert said["graph_version_ref"] == first.graph_version_ref
    assert all("rollout" not in (r.execution_metadata or {}) for r in records[1:])
    report = ecp.rollouts.verify("t1", rollout.rollout_id)
    assert [a.observed for a in report.arms] == [costs[0, "0.10"], costs[1, "0.04"]]
    assert [a.expected for a in report.arms] == [1800.0, 200.0]
    assert report.homogeneous is True
    ecp.rollouts.end("t1", rollout.rollout_id, "priced@2")
    for _ in range(20):
        run, _ = ecp.runs.start_and_drive("t1", StartRunRequest(deployment_ref="pay"))
        assert (run.graph_version_ref, run.rollout_id, run.arm) == ("priced@2", None, None)
        assert run.state["cost"] == "0.04"
