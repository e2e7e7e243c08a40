"""Randomized comparisons: `/v1/decisions/compare` restricted to a rollout's arms (ADR 0095).

The real services over the in-memory store. Units are assigned by the rollout itself; each
unit's evidence names the version its arm runs, except where a test plants evidence under the
other version, which the restriction must leave out.
"""

import hashlib
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.canonical import canonical_json
from ecp_core.decisions.model import (
    CompareRequest,
    ComparisonPolicy,
    CreateScheduleRequest,
    RolloutRecommendation,
    Verdict,
)
from ecp_core.decisions.randomized import NOT_HOMOGENEOUS, RolloutScope, restrict, unit_of
from ecp_core.decisions.selection import Selection
from ecp_core.decisions.service import request_digest
from ecp_core.deployments.model import CreateDeploymentRequest
from ecp_core.errors import ValidationFailed
from ecp_core.evidence.model import (
    Digested,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.graphs import GraphBuilder
from ecp_core.memory import MemoryStore
from ecp_core.rollouts.model import (
    ArmRequest,
    Assignment,
    CreateRolloutRequest,
    RolloutUnit,
    UpdateRolloutRequest,
)
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import CostMeasurement
from ecp_core.wire import digest_form
from ecp_http.server.console.figures import decision_row

pytestmark = pytest.mark.unit

RULE = "C17 rollout-compare"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")
UNITS = 400
KEY = "00" * 32
"""Every rollout's assignment key: with a random one, verification flags a fair assignment
one time in a thousand (its test's false-positive rate), and the comparisons would abstain."""
PRICES = {"g@1": Decimal("1.00"), "g@2": Decimal("0.50")}


def graph(price):
    """Graph ``g`` whose one action carries ``price`` (each price is a version of its own)."""
    work = {"values": {"price": str(price)}}
    return (
        GraphBuilder("g")
        .action("work", "set", arguments=work)
        .end("done")
        .chain("work", "done")
        .build()
    )


def world(weights=(50, 50)):
    """A deployment of g@1 with an active rollout of g@1 and g@2 and outcome rules for both."""
    clock = FixedClock(T0)
    store = MemoryStore()
    ecp = Ecp.build(
        store.unit_of_work,
        signer=None,
        clock=clock,
        ids=SequentialIds("d"),
        rollout_keys=lambda: KEY,
    )
    for price in PRICES.values():
        ecp.graphs.register("t", graph(price))
    ecp.graphs.deploy(
        "t", CreateDeploymentRequest(deployment_ref="dep", graph_id="g", graph_version=1)
    )
    arms = tuple(
        ArmRequest(graph_version_ref=ref, weight=w)
        for ref, w in zip(("g@1", "g@2"), weights, strict=True)
    )
    rollout = ecp.rollouts.create(
        "t", CreateRolloutRequest(deployment_ref="dep", arms=arms, unit=RolloutUnit.RUN)
    )
    for version in PRICES:
        ecp.evidence.define_outcome(
            ACTOR,
            OutcomeDefinitionRequest(
                workflow_id="g",
                workflow_version=version,
                outcome_type="done",
                predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            ),
        )
    return ecp, clock, store, rollout


def event(unit, version, at, cost):
    return ExecutionEvent(
        event_id=f"e-{unit}-{version}",
        workflow_id="g",
        workflow_version=version,
        run_id=unit,
        occurred_at=at,
        cost_usd=cost,
        cost_measurement=CostMeasurement.MEASURED,
        charge_id=f"c-{unit}-{version}",
    )


def outcome(unit, version, at, accepted=True):
    return OutcomeEvent(
        event_id=f"o-{unit}-{version}",
        workflow_id="g",
        workflow_version=version,
        run_id=unit,
        outcome_type="done",
        asserted_at=at,
        value=accepted,
    )


def assign_and_record(ecp, clock, rollout, units=UNITS, first=0):
    """Each unit assigned by the rollout, then one charge (its arm's price, jittered) and an
    accepted outcome under its arm's version. Returns {unit: version}."""
    chance = random.Random(7)
    versions = {}
    events, outcomes = [], []
    for n in range(first, first + units):
        unit = f"u{n:04d}"
        clock.advance(1)
        version = ecp.rollouts.assign("t", rollout.rollout_id, unit).graph_version_ref
        versions[unit] = version
        jitter = Decimal(chance.randint(90, 110)) / 100
        events.append(event(unit, version, clock.now(), PRICES[version] * jitter))
        outcomes.append(outcome(unit, version, clock.now()))
    ecp.evidence.ingest_executions("t", events)
    ecp.evidence.ingest_outcomes("t", outcomes)
    return versions


def compare(ecp, rollout_id, **changes):
    values = {
        "workflow_id": "g",
        "baseline_version": "g@1",
        "candidate_version": "g@2",
        "start": T0,
        "end": T0 + timedelta(days=1),
        "policy": ComparisonPolicy(min_success_rate=0.5, min_runs=30, max_success_rate_drop=0.05),
        "rollout_id": rollout_id,
        **changes,
    }
    artifact, _ = ecp.decisions.compare(ACTOR, CompareRequest(**values))
    return artifact


@pytest.mark.spec(RULE)
def test_a_comparison_restricted_to_a_rollout_is_randomized_and_names_it():
    ecp, clock, _, rollout = world()
    versions = assign_and_record(ecp, clock, rollout)
    clock.advance(60)
    found = compare(ecp, rollout.rollout_id)
    assert found.claim_class == "randomized_comparison"
    assert found.rollout_id == rollout.rollout_id
    assert found.verdict is Verdict.PASS  # the candidate costs half per accepted outcome
    assert found.rollout_recommendation is RolloutRecommendation.PROMOTE
    cost = next(c for c in found.constraints if c.name == "cost_per_accepted_outcome_ratio")
    assert cost.interval is not None
    assert 0.4 < cost.interval[0] <= cost.estimate <= cost.interval[1] < 0.6
    counted = found.source_delivery
    assert counted is not None
    assert counted.baseline.runs == sum(v == "g@1" for v in versions.values())
    assert counted.candidate.runs == sum(v == "g@2" for v in versions.values())
    assert any("randomized comparison" in text for text in found.limitations)
    assert not any("not a randomized experiment" in text for text in found.limitations)
    observed = compare(ecp, None)  # the same evidence, observed: its own claim, no rollout
    assert (observed.claim_class, observed.rollout_id) == ("observed_comparison", None)
    assert observed.rollout_recommendation is None
    shown = decision_row(found)  # the console's decision card
    assert (shown["rollout_id"], shown["rollout_recommendation"]) == (rollout.rollout_id, "promote")
    assert decision_row(observed)["rollout_id"] is None


@pytest.mark.spec(RULE)
def test_a_candidate_dearer_per_outcome_recommends_rolling_back():
    ecp, clock, _, rollout = world()
    assign_and_record(ecp, clock, rollout)
    clock.advance(60)
    found = compare(ecp, rollout.rollout_id, baseline_version="g@2", candidate_version="g@1")
    assert found.verdict is Verdict.FAIL
    assert found.rollout_recommendation is RolloutRecommendation.ROLL_BACK


@pytest.mark.spec(RULE)
def test_evidence_of_units_outside_the_arm_is_left_out():
    """Evidence under g@2 for units the rollout gave g@1 (and for units it never assigned)."""
    ecp, clock, _, rollout = world()
    versions = assign_and_record(ecp, clock, rollout)
    planted = [u for u, v in versions.items() if v == "g@1"][:20]
    strays = [f"stray{n}" for n in range(20)]
    ecp.evidence.ingest_executions(
        "t", [event(u, "g@2", clock.now(), Decimal(50)) for u in [*planted, *strays]]
    )
    ecp.evidence.ingest_outcomes("t", [outcome(u, "g@2", clock.now()) for u in planted + strays])
    clock.advance(60)
    randomized = compare(ecp, rollout.rollout_id)
    observed = compare(ecp, None)
    assert randomized.source_delivery.candidate.runs == sum(v == "g@2" for v in versions.values())
    assert observed.source_delivery.candidate.runs == randomized.source_delivery.candidate.runs + 40
    assert randomized.verdict is Verdict.PASS  # the planted dear runs do not count


@pytest.mark.spec(RULE)
def test_units_moved_by_a_weight_change_are_left_out_and_counted():
    ecp, clock, _, rollout = world()
    first = assign_and_record(ecp, clock, rollout)
    ecp.rollouts.update(
        "t",
        rollout.rollout_id,
        UpdateRolloutRequest(
            arms=(
                ArmRequest(graph_version_ref="g@1", weight=10),
                ArmRequest(graph_version_ref="g@2", weight=90),
            )
        ),
    )
    moved = [
        u
        for u, v in first.items()
        if ecp.rollouts.assign("t", rollout.rollout_id, u).graph_version_ref != v
    ]
    assert moved  # 40 of the 100 buckets changed hands
    # A moved unit's later run under its new version: it stands on both sides, counted once.
    again = {u: "g@2" if first[u] == "g@1" else "g@1" for u in moved}
    ecp.evidence.ingest_executions(
        "t", [event(u, v, clock.now(), PRICES[v]) for u, v in again.items()]
    )
    ecp.evidence.ingest_outcomes("t", [outcome(u, v, clock.now()) for u, v in again.items()])
    clock.advance(60)
    found = compare(ecp, rollout.rollout_id)
    assert found.source_delivery.baseline.runs + found.source_delivery.candidate.runs == (
        UNITS - len(moved)
    )
    assert f"{len(moved)} units moved between arms by a weight change were left out" in (
        found.limitations
    )


@pytest.mark.spec(RULE, "C17 rollout-verify")
def test_a_flagged_assignment_makes_the_comparison_abstain():
    ecp, clock, store, rollout = world()
    assign_and_record(ecp, clock, rollout)
    with store.unit_of_work() as tx:  # tampering: 300 more units, every one in arm 0
        for n in range(300):
            tx.rollouts.assign(
                Assignment(
                    tenant_id="t",
                    rollout_id=rollout.rollout_id,
                    period=1,
                    unit_id=f"forced{n}",
                    arm=0,
                    assigned_at=clock.now(),
                )
            )
        tx.commit()
    assert ecp.rollouts.verify("t", rollout.rollout_id).homogeneous is False
    clock.advance(60)
    found = compare(ecp, rollout.rollout_id)
    assert found.verdict is Verdict.ABSTAIN
    assert NOT_HOMOGENEOUS in found.abstain_reasons
    assert found.rollout_recommendation is RolloutRecommendation.CONTINUE


@pytest.mark.spec(RULE)
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"rollout_id": "nope"}, "rollout_id"),
        ({"candidate_version": "g@3"}, "candidate_version"),
        ({"baseline_version": "other@1"}, "baseline_version"),
        ({"workflow_id": "w"}, "workflow_id"),
        ({"candidate_version": "g@1"}, "candidate_version"),
    ],
)
def test_a_rollout_that_does_not_hold_both_versions_is_refused(changes, field):
    ecp, _, _, rollout = world()
    values = {"rollout_id": rollout.rollout_id, **changes}
    with pytest.raises(ValidationFailed) as refused:
        compare(ecp, **values)
    assert [e.loc for e in refused.value.errors] == [(field,)]
    assert ecp.decisions.history("t", limit=10)[0] == []  # nothing retained


@pytest.mark.spec(RULE)
def test_a_request_without_a_rollout_keeps_its_digest():
    """Requests retained before rollouts existed are found again by the same digest (the
    literal is what the code before rollouts computed)."""
    request = CompareRequest(
        workflow_id="w",
        baseline_version="v1",
        candidate_version="v2",
        start=T0,
        end=T0 + timedelta(1),
    )
    before = {k: v for k, v in digest_form(request).items() if k != "rollout_id"}
    assert request_digest(request) == (
        "sha256:" + hashlib.sha256(canonical_json(before)).hexdigest()
    )
    assert request_digest(request) == (
        "sha256:74f88ae36cc64e6ab270fec9ac0584501486b85da97b9283421cdcc12d9ab72b"
    )
    with_rollout = attrs.evolve(request, rollout_id="r1")
    assert request_digest(with_rollout) != request_digest(request)


@pytest.mark.spec(RULE, "§4.4 decision-schedules")
def test_a_schedule_watching_a_rollout_records_its_recommendation():
    ecp, clock, _, rollout = world()
    schedule = ecp.decisions.create_schedule(
        ACTOR,
        CreateScheduleRequest(
            workflow_id="g",
            baseline_version="g@1",
            candidate_version="g@2",
            interval_seconds=86_400,
            window_seconds=86_400,
            policy=ComparisonPolicy(min_success_rate=0.5, min_runs=30, max_success_rate_drop=0.05),
            rollout_id=rollout.rollout_id,
        ),
    )
    assert schedule.rollout_id == rollout.rollout_id
    assign_and_record(ecp, clock, rollout)
    clock.advance(60)
    ecp.decisions.run_due()
    [decided], _ = ecp.decisions.history("t", limit=10)
    assert (decided.schedule_id, decided.rollout_id) == (schedule.schedule_id, rollout.rollout_id)
    assert decided.claim_class == "randomized_comparison"
    assert decided.rollout_recommendation is RolloutRecommendation.PROMOTE
    with pytest.raises(ValidationFailed):
        ecp.decisions.create_schedule(
            ACTOR, attrs.evolve(CreateScheduleRequest(**_schedule_fields()), rollout_id="nope")
        )


def _schedule_fields():
    return {
        "workflow_id": "g",
        "baseline_version": "g@1",
        "candidate_version": "g@2",
        "interval_seconds": 86_400,
        "window_seconds": 86_400,
    }


@pytest.mark.spec(RULE)
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e", "f"]),
            st.sampled_from(["g@1", "g@2"]),
        ),
        max_size=20,
    ),
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.frozensets(st.sampled_from([0, 1]), min_size=1),
    ),
    st.sampled_from([0, 1]),
)
def test_restriction_keeps_exactly_the_units_only_in_the_arm(labelled, assigned, arm):
    """Against a reference: an event stays iff its unit was assigned this arm and no other."""
    _, _, store, rollout = world()
    with store.unit_of_work() as tx:
        for unit, arms in assigned.items():
            for period, had in enumerate(sorted(arms), start=1):
                tx.rollouts.assign(
                    Assignment(
                        tenant_id="t",
                        rollout_id=rollout.rollout_id,
                        period=period,
                        unit_id=unit,
                        arm=had,
                        assigned_at=T0,
                    )
                )
        tx.commit()
    entries = tuple(
        Digested(event(unit, version, T0, Decimal(1)), f"sha256:{n}")
        for n, (unit, version) in enumerate(dict.fromkeys(labelled))
    )
    selection = Selection(executions=entries, outcomes=(), revisions=(), definition=None)
    scope = RolloutScope(rollout=rollout, baseline_arm=0, candidate_arm=1, homogeneous=True)
    with store.unit_of_work() as tx:
        kept, moved = restrict(tx, scope, selection, arm)
    expected = [e for e in entries if assigned.get(unit_of(e.item, rollout.unit)) == {arm}]
    assert list(kept.executions) == expected
    units_seen = {e.item.run_id for e in entries}
    assert moved == {
        u for u, had in assigned.items() if u in units_seen and arm in had and len(had) > 1
    }
