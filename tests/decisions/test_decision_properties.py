"""Properties of version decisions over random evidence and policies (in-memory reference).

- a pass never occurs when an abstain condition holds: the conditions are recomputed here from
  the generated runs (not from the service's own economics), and the artifact's abstain reasons
  are exactly those conditions;
- ``calculation_inputs`` rows are the generated runs grouped, their multiplicities summing to the
  delivered run counts;
- identical requests are idempotent, and the selected evidence does not depend on the order it
  was ingested in.
"""

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.model import CompareRequest
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    OutcomeMeasurement,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
)
from ecp_core.system import FixedClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, tzinfo=UTC)
START, END = T0, T0 + timedelta(days=10)
NOW = T0 + timedelta(days=20)
WHEN = {
    "earlier": T0 + timedelta(hours=23),
    "past": T0 + timedelta(days=1),
    "future": NOW + timedelta(days=1),
}
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")
M, E, U = CostMeasurement.MEASURED, CostMeasurement.ESTIMATED, CostMeasurement.UNMEASURED
OBSERVED, INFERRED = OutcomeMeasurement.MEASURED, OutcomeMeasurement.INFERRED
RULES = {"a": True, "b": False}  # outcome type "done", success when the value equals this
VERSIONS = ("v1", "v2")


@attrs.frozen
class Kind:
    """How one run looks: its charges, a revision of its first charge, its assertions."""

    charges: tuple[tuple[str | None, CostMeasurement], ...] = (("1", M),)
    assertions: tuple[tuple[bool, OutcomeMeasurement, str, str], ...] = (
        (True, OBSERVED, "past", "done"),
    )
    revision: tuple[str | None, CostMeasurement] | None = None
    outside: bool = False


KINDS = {
    "ok": Kind(),
    "fail": Kind(assertions=((False, OBSERVED, "past", "done"),)),
    "cheap_ok": Kind(charges=(("0.5", M),)),
    "dear_fail": Kind(charges=(("2", M),), assertions=((False, OBSERVED, "past", "done"),)),
    "no_outcome": Kind(assertions=()),
    "future_only": Kind(assertions=((True, OBSERVED, "future", "done"),)),
    "other_type": Kind(assertions=((True, OBSERVED, "past", "other"),)),
    "unknown_cost": Kind(charges=((None, U),)),
    "summary_only": Kind(charges=()),
    "estimated": Kind(charges=(("1", E),)),
    "estimated_and_unknown": Kind(charges=(("1", E), (None, U))),
    "zero": Kind(charges=(("0", M),)),
    "two_charges": Kind(charges=(("0.1", M), ("1E-8", M))),
    "inferred": Kind(assertions=((True, INFERRED, "past", "done"),)),
    "superseded_inferred": Kind(
        assertions=((False, INFERRED, "earlier", "done"), (True, OBSERVED, "past", "done"))
    ),
    "future_inferred": Kind(
        assertions=((True, OBSERVED, "past", "done"), (False, INFERRED, "future", "done"))
    ),
    "revised_unknown": Kind(revision=(None, U)),
    "revised_estimated": Kind(revision=("2", E)),
    "revised_cheaper": Kind(revision=("0.25", M)),
    "outside": Kind(outside=True),
}
RARE = [name for name in KINDS if name not in {"ok", "fail", "cheap_ok"}]
rules = st.sampled_from(["a", "a", "a", "b", None])
INVENTORY_MODES = [
    "none",
    "none",
    "none",
    "exact",
    "exact",
    "missing_run",
    "unlisted_run",
    "count_off",
]


@attrs.frozen
class Scenario:
    base_runs: tuple[str, ...]
    cand_runs: tuple[str, ...]
    base_rule: str | None
    cand_rule: str | None
    base_inventory: str
    cand_inventory: str
    policy: dict


policies = st.fixed_dictionaries(
    {
        "min_success_rate": st.sampled_from([0.3, 0.5, 0.0, 0.3, 0.5, None]),
        "min_runs": st.one_of(st.sampled_from([30, 10, 2]), st.integers(2, 41)),
        "min_outcome_coverage": st.sampled_from([0.9, 0.5, 0.0, 1.0]),
        "allow_estimated_cost": st.booleans(),
        "confidence_level": st.sampled_from([0.95, 0.8, 0.99]),
        "max_cost_growth": st.sampled_from([0.1, 1.0, 10.0]),
        "max_success_rate_drop": st.sampled_from([0.0, 0.5, 1.0]),
    }
)
inventory_modes = st.sampled_from(INVENTORY_MODES)


@st.composite
def near_passing(draw):
    """A regular pattern of runs with a few odd ones: one abstain condition at a time, often."""

    def side(pattern):
        n = draw(st.one_of(st.integers(30, 40), st.integers(0, 40)))
        kinds = [pattern[i % len(pattern)] for i in range(n)]
        for name in draw(st.lists(st.sampled_from([*RARE, "ok", "fail"]), max_size=2)):
            if kinds:
                kinds[draw(st.integers(0, len(kinds) - 1))] = name
            else:
                kinds.append(name)
        return tuple(kinds)

    inventories = draw(
        st.one_of(
            st.sampled_from([("none", "none"), ("exact", "exact")]),
            st.tuples(inventory_modes, inventory_modes),
        )
    )
    same_rule = draw(st.sampled_from(["a", "a", "b"]))
    return Scenario(
        base_runs=side(
            draw(st.sampled_from([("ok", "fail"), ("ok", "fail", "cheap_ok"), ("zero",)]))
        ),
        cand_runs=side(
            draw(
                st.sampled_from(
                    [("ok",), ("ok", "cheap_ok"), ("ok", "fail"), ("cheap_ok", "dear_fail")]
                )
            )
        ),
        base_rule=draw(st.one_of(st.just(same_rule), rules)),
        cand_rule=draw(st.one_of(st.just(same_rule), rules)),
        base_inventory=inventories[0],
        cand_inventory=inventories[1],
        policy=draw(policies),
    )


wild = st.builds(
    Scenario,
    base_runs=st.lists(st.sampled_from(["ok", "fail"] * 6 + RARE), max_size=40).map(tuple),
    cand_runs=st.lists(
        st.sampled_from(["ok"] * 8 + ["cheap_ok"] * 4 + ["fail"] + RARE), max_size=40
    ).map(tuple),
    base_rule=rules,
    cand_rule=rules,
    base_inventory=inventory_modes,
    cand_inventory=inventory_modes,
    policy=policies,
)
scenarios = st.one_of(near_passing(), wild)
PASSING = Scenario(
    base_runs=("ok", "fail") * 20,
    cand_runs=("ok",) * 40,
    base_rule="a",
    cand_rule="a",
    base_inventory="exact",
    cand_inventory="exact",
    policy={
        "min_success_rate": 0.5,
        "min_runs": 30,
        "min_outcome_coverage": 0.9,
        "allow_estimated_cost": False,
        "confidence_level": 0.95,
        "max_cost_growth": 0.1,
        "max_success_rate_drop": 0.0,
    },
)


# --- the evidence a scenario stores ----------------------------------------------------------


def ids_digest(event_ids):
    text = json.dumps(sorted(event_ids), separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def side_evidence(version, kinds, inventory_mode):
    """Execution events, assertions, revisions and the inventory (or None) of one side."""
    events, assertions, revisions = [], [], []
    for i, name in enumerate(kinds):
        kind = KINDS[name]
        run = f"{version}-r{i:03d}"
        at = START - timedelta(hours=1, minutes=i) if kind.outside else START + timedelta(minutes=i)
        window = f"{version}-sw{i % 2}"
        for k, (cost, measurement) in enumerate(kind.charges):
            events.append(
                ExecutionEvent(
                    event_id=f"{version}-e{i:03d}-{k}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    occurred_at=at + timedelta(seconds=k),
                    cost_usd=None if cost is None else Decimal(cost),
                    cost_measurement=measurement,
                    charge_id=f"{version}-c{i:03d}-{k}",
                    source_window_id=window,
                )
            )
        if not kind.charges:
            events.append(
                ExecutionEvent(
                    event_id=f"{version}-s{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    occurred_at=at,
                    cost_role=CostRole.SUMMARY,
                    source_window_id=window,
                )
            )
        if kind.revision is not None:
            cost, measurement = kind.revision
            revisions.append(
                ChargeRevision(
                    event_id=f"{version}-rev{i:03d}",
                    charge_id=f"{version}-c{i:03d}-0",
                    revised_at=T0 + timedelta(days=2),
                    cost_usd=None if cost is None else Decimal(cost),
                    cost_measurement=measurement,
                )
            )
        for k, (value, measurement, when, outcome_type) in enumerate(kind.assertions):
            assertions.append(
                OutcomeEvent(
                    event_id=f"{version}-o{i:03d}-{k}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    outcome_type=outcome_type,
                    asserted_at=WHEN[when],
                    value=value,
                    outcome_measurement=measurement,
                )
            )
    return events, assertions, revisions, inventory(version, events, inventory_mode)


def inventory(version, events, mode):
    if mode == "none":
        return None
    inside = [e for e in events if START <= e.occurred_at <= END]
    runs = sorted({e.run_id for e in inside})
    by_window = {}
    for event in inside:
        by_window.setdefault(event.source_window_id, []).append(event.event_id)
    windows = [
        SourceWindow(source_window_id=w, expected_events=len(ids), event_ids_digest=ids_digest(ids))
        for w, ids in sorted(by_window.items())
    ]
    if mode == "missing_run":
        runs.append(f"{version}-ghost")
    elif mode == "unlisted_run":
        runs = runs[1:]
    elif mode == "count_off":
        windows = (
            [attrs.evolve(windows[0], expected_events=windows[0].expected_events + 1), *windows[1:]]
            if windows
            else [
                SourceWindow(
                    source_window_id="ghost", expected_events=1, event_ids_digest=ids_digest(["x"])
                )
            ]
        )
    return SourceInventory(
        event_id=f"inv-{version}",
        workflow_id="w",
        workflow_version=version,
        capture_start=START,
        capture_end=END,
        terminal_run_ids=tuple(runs),
        windows=tuple(windows),
    )


def build(scenario, *, reverse=False):
    """A world holding the scenario's evidence (ingested in reverse order if asked)."""
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    for version, rule in zip(VERSIONS, (scenario.base_rule, scenario.cand_rule), strict=True):
        if rule is not None:
            ecp.evidence.define_outcome(
                ACTOR,
                OutcomeDefinitionRequest(
                    workflow_id="w",
                    workflow_version=version,
                    outcome_type="done",
                    predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=RULES[rule]),
                ),
            )
    sides = [
        side_evidence("v1", scenario.base_runs, scenario.base_inventory),
        side_evidence("v2", scenario.cand_runs, scenario.cand_inventory),
    ]
    events, assertions, revisions = ([x for side in sides for x in side[part]] for part in range(3))
    inventories = [side[3] for side in sides if side[3] is not None]
    order = reversed if reverse else list
    for batch, ingest in (
        (events, ecp.evidence.ingest_executions),
        (assertions, ecp.evidence.ingest_outcomes),
        (revisions, ecp.evidence.ingest_revisions),
        (inventories, ecp.evidence.ingest_inventories),
    ):
        if batch:
            ingest("t", list(order(batch)))
    return ecp


def request(scenario):
    body = {
        "workflow_id": "w",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": "2026-11-01T00:00:00Z",
        "end": "2026-11-11T00:00:00Z",
        "policy": scenario.policy,
    }
    if scenario.base_inventory != "none":
        body["baseline_inventory_id"] = "inv-v1"
    if scenario.cand_inventory != "none":
        body["candidate_inventory_id"] = "inv-v2"
    return structure(body, CompareRequest)


# --- the independent model -------------------------------------------------------------------


@attrs.frozen
class ModelRun:
    cost: Decimal | None
    cost_measurement: str
    accepted: bool | None
    outcome_measurement: str | None


def model_run(kind, rule):
    prices = list(kind.charges)
    if kind.revision is not None and prices:
        prices[0] = kind.revision
    if not prices or any(cost is None for cost, _ in prices):
        cost, how = None, "unmeasured"
    else:
        cost = sum((Decimal(c) for c, _ in prices), Decimal(0))
        how = "estimated" if any(m is E for _, m in prices) else "measured"
    current = [
        (WHEN[when], k, value, measurement)
        for k, (value, measurement, when, outcome_type) in enumerate(kind.assertions)
        if outcome_type == "done" and WHEN[when] <= NOW
    ]
    if rule is None or not current:
        return ModelRun(cost, how, None, None)
    _, _, value, measurement = max(current)
    return ModelRun(cost, how, value is RULES[rule], measurement.value)


def model_side(kinds, rule, inventory_mode):
    runs = [model_run(KINDS[name], rule) for name in kinds if not KINDS[name].outside]
    if inventory_mode == "missing_run":
        runs.append(ModelRun(None, "unmeasured", None, None))
    mismatch = inventory_mode == "count_off" or (inventory_mode == "unlisted_run" and bool(runs))
    return runs, mismatch


def expected_reasons(scenario):
    """Every abstain condition of ``interval-policy/1`` that holds, from the generated data."""
    policy = scenario.policy
    base, base_mismatch = model_side(
        scenario.base_runs, scenario.base_rule, scenario.base_inventory
    )
    cand, cand_mismatch = model_side(
        scenario.cand_runs, scenario.cand_rule, scenario.cand_inventory
    )
    every = base + cand
    coverage = Fraction(str(policy["min_outcome_coverage"]))
    found = set()
    if policy["min_success_rate"] is None:
        found.add("min_success_rate_missing")
    if min(len(base), len(cand)) < policy["min_runs"]:
        found.add("too_few_runs")
    if any(
        not runs or Fraction(sum(r.accepted is not None for r in runs), len(runs)) < coverage
        for runs in (base, cand)
    ):
        found.add("low_outcome_coverage")
    if any(r.cost is None for r in every):
        found.add("unmeasured_cost")
    if any(r.cost_measurement == "estimated" for r in every) and not policy["allow_estimated_cost"]:
        found.add("estimated_cost")
    if any(r.outcome_measurement == "inferred" for r in every):
        found.add("inferred_outcomes")
    if not any(r.accepted for r in base):
        found.add("no_accepted_baseline_outcomes")
    if base and all(r.cost == 0 for r in base):
        found.add("zero_baseline_cost")
    if None in (scenario.base_rule, scenario.cand_rule):
        found.add("outcome_definition_missing")
    elif scenario.base_rule != scenario.cand_rule:
        found.add("outcome_definitions_differ")
    if (scenario.base_inventory == "none") != (scenario.cand_inventory == "none"):
        found.add("source_inventory_one_sided")
    if base_mismatch or cand_mismatch:
        found.add("source_inventory_mismatch")
    return found, base, cand


def rows(runs):
    return Counter((r.cost, r.cost_measurement, r.accepted, r.outcome_measurement) for r in runs)


def artifact_rows(found):
    counted = Counter()
    for row in found:
        key = (
            None if row.cost_usd is None else Decimal(row.cost_usd),
            row.cost_measurement,
            row.accepted,
            row.outcome_measurement,
        )
        counted[key] += row.runs
    return counted


# --- properties ------------------------------------------------------------------------------


@pytest.mark.spec("§4.4 compare-abstains")
@example(PASSING)
@given(scenarios)
def test_a_pass_never_occurs_when_an_abstain_condition_holds(scenario):
    artifact, created = build(scenario).decisions.compare(ACTOR, request(scenario))
    assert created
    expected, _, _ = expected_reasons(scenario)
    reasons = set(artifact.abstain_reasons)
    unresolved = {r for r in reasons if r.startswith("unresolved:")}
    assert reasons - unresolved == expected
    if expected:
        assert artifact.verdict.value == "abstain"
        assert not unresolved  # abstain rules come first; the intervals are not consulted
        assert artifact.recommended_action.value == "collect_more_evidence"
    statuses = {c.status.value for c in artifact.constraints}
    if artifact.verdict.value == "pass":
        assert not expected
        assert statuses == {"pass"}
        assert artifact.recommended_action.value == "review_candidate"
    if artifact.verdict.value == "fail":
        assert "fail" in statuses
        assert artifact.recommended_action.value == "keep_baseline"


@pytest.mark.spec("§4.4 interval-constraints")
def test_the_explicit_example_reaches_a_pass():
    artifact, _ = build(PASSING).decisions.compare(ACTOR, request(PASSING))
    assert artifact.verdict.value == "pass"


@pytest.mark.spec("§2.9 calculation-inputs")
@given(scenarios)
def test_calculation_inputs_are_the_runs_grouped_with_multiplicities_summing_to_the_runs(scenario):
    artifact, _ = build(scenario).decisions.compare(ACTOR, request(scenario))
    _, base, cand = expected_reasons(scenario)
    inputs = artifact.calculation_inputs
    assert inputs.version == "run-economics/1"
    for found, model, delivery in (
        (inputs.baseline, base, artifact.source_delivery.baseline),
        (inputs.candidate, cand, artifact.source_delivery.candidate),
    ):
        assert sum(row.runs for row in found) == delivery.runs == len(model)
        assert all(row.runs > 0 for row in found)
        assert artifact_rows(found) == rows(model)
        assert len(
            {(r.cost_usd, r.cost_measurement, r.accepted, r.outcome_measurement) for r in found}
        ) == len(found)  # grouped: no two rows alike


@pytest.mark.spec("§4.4 decision-revisions")
@given(scenarios)
def test_identical_requests_are_idempotent_and_ingestion_order_does_not_matter(scenario):
    ecp = build(scenario)
    first, created = ecp.decisions.compare(ACTOR, request(scenario))
    assert created
    again, created = ecp.decisions.compare(ACTOR, request(scenario))
    assert not created
    assert again.decision_id == first.decision_id
    assert again == first
    shuffled, _ = build(scenario, reverse=True).decisions.compare(ACTOR, request(scenario))
    assert shuffled.source_evidence == first.source_evidence
    assert shuffled.calculation_inputs == first.calculation_inputs
    assert (shuffled.verdict, shuffled.abstain_reasons) == (first.verdict, first.abstain_reasons)
