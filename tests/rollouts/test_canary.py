"""An end-to-end canary on PostgreSQL: 2,000 runs at 90/10 whose actions write their cost as
evidence, verified, compared at random (the cheaper version found with its interval), then the
winner promoted."""

import hashlib
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest

from ecp_core.decisions.model import (
    CompareRequest,
    ComparisonPolicy,
    RolloutRecommendation,
    Verdict,
)
from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.evidence.model import (
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.graphs import GraphBuilder
from ecp_core.identity import ActorIdentity
from ecp_core.rollouts.model import ArmRequest, CreateRolloutRequest, RolloutUnit
from ecp_core.runs.run.actions import ActionContext, ActionRegistry
from ecp_core.runs.run.model import StartRunRequest
from ecp_core.service import Ecp
from ecp_core.signing import Ed25519Signer
from ecp_core.system import SequentialIds, SystemClock
from ecp_core.types import AuthMethod, CostMeasurement, RunStatus

pytestmark = pytest.mark.integration

RUNS = 2_000
ANALYST = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t1")


def priced(cost: str):
    """Graph ``priced`` whose one action charges about ``cost`` and records it in the state."""
    return (
        GraphBuilder("priced")
        .action("price", "charge", arguments={"cost": cost})
        .end("done")
        .chain("price", "done")
        .build()
    )


def charging(ecp: list[Ecp]):
    """The ``charge`` action: the run's cost (its version's price, jittered by the run id) and
    an accepted outcome, written as evidence of the run's graph version."""

    def charge(context: ActionContext) -> dict[str, str]:
        service = ecp[0]
        run = service.runs.get(context.tenant_id, context.run_id)
        jitter = Decimal(90 + hashlib.sha256(run.run_id.encode()).digest()[0] % 21) / 100
        cost = Decimal(context.arguments["cost"]) * jitter
        now = SystemClock().now()
        where = {"workflow_id": "priced", "workflow_version": run.graph_version_ref}
        service.evidence.ingest_executions(
            context.tenant_id,
            [
                ExecutionEvent(
                    event_id=f"charge-{run.run_id}",
                    run_id=run.run_id,
                    occurred_at=now,
                    cost_usd=cost,
                    cost_measurement=CostMeasurement.MEASURED,
                    charge_id=f"charge-{run.run_id}",
                    **where,
                )
            ],
        )
        service.evidence.ingest_outcomes(
            context.tenant_id,
            [
                OutcomeEvent(
                    event_id=f"done-{run.run_id}",
                    run_id=run.run_id,
                    outcome_type="done",
                    asserted_at=now,
                    value=True,
                    **where,
                )
            ],
        )
        return {"cost": context.arguments["cost"]}

    return charge


@pytest.mark.spec(
    "C17 rollout-assign", "C17 rollout-verify", "C17 rollout-end", "C17 rollout-compare"
)
def test_a_90_10_canary_runs_verifies_compares_and_promotes(postgres_store):
    holder: list[Ecp] = []
    actions = ActionRegistry()
    actions.register("charge", charging(holder))
    ecp = Ecp.build(
        postgres_store.unit_of_work,
        signer=Ed25519Signer(bytes(range(32)), key_id="k"),
        actions=actions,
        ids=SequentialIds("c"),  # run ids are the units: with the key, a repeatable assignment
        rollout_keys=lambda: "00" * 32,
    )
    holder.append(ecp)
    started = SystemClock().now()
    for cost in ("0.10", "0.04"):
        ecp.graphs.register("t1", priced(cost))
    for version in ("priced@1", "priced@2"):
        ecp.evidence.define_outcome(
            ANALYST,
            OutcomeDefinitionRequest(
                workflow_id="priced",
                workflow_version=version,
                outcome_type="done",
                predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            ),
        )
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
    compared, _ = ecp.decisions.compare(
        ANALYST,
        CompareRequest(
            workflow_id="priced",
            baseline_version="priced@1",
            candidate_version="priced@2",
            start=started,
            end=SystemClock().now() + timedelta(seconds=1),
            policy=ComparisonPolicy(min_success_rate=0.9, max_success_rate_drop=0.05),
            rollout_id=rollout.rollout_id,
        ),
    )
    assert (compared.claim_class, compared.rollout_id) == (
        "randomized_comparison",
        rollout.rollout_id,
    )
    assert compared.source_delivery.baseline.runs == costs[0, "0.10"]
    assert compared.source_delivery.candidate.runs == costs[1, "0.04"]
    cost = next(c for c in compared.constraints if c.name == "cost_per_accepted_outcome_ratio")
    low, high = cost.interval
    assert low <= 0.4 <= high  # 0.04 / 0.10, within the interval
    assert high < 1  # the candidate is cheaper per accepted outcome, with confidence
    assert compared.verdict is Verdict.PASS
    assert compared.rollout_recommendation is RolloutRecommendation.PROMOTE
    ecp.rollouts.end("t1", rollout.rollout_id, "priced@2")
    for _ in range(20):
        run, _ = ecp.runs.start_and_drive("t1", StartRunRequest(deployment_ref="pay"))
        assert (run.graph_version_ref, run.rollout_id, run.arm) == ("priced@2", None, None)
        assert run.state["cost"] == "0.04"
