"""Version decisions (``interval-policy/1``) on the core, one test per rule.

Every test runs the real services over the in-memory store with a fixed clock. The standard
scenario passes: 40 runs a side, the baseline accepting half at 1.00 a run, the candidate all
at 1.00 a run, one outcome rule for both versions. Each abstain test changes one thing about it
and expects exactly that rule's code, so the rule alone turns the pass into an abstention.
"""

import hashlib
import json
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import attrs
import pytest

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.model import (
    CompareRequest,
    CreateScheduleRequest,
    DecisionArtifact,
    method_fields,
)
from ecp_core.errors import ValidationFailed
from ecp_core.evidence.model import (
    ChargeRevision,
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    OutcomeMeasurement,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
)
from ecp_core.memory import MemoryStore
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, tzinfo=UTC)
START, END = T0, T0 + timedelta(days=10)
NOW = T0 + timedelta(days=20)
ASSERTED = T0 + timedelta(days=1)
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")
MEASURED, ESTIMATED, UNMEASURED = (
    CostMeasurement.MEASURED,
    CostMeasurement.ESTIMATED,
    CostMeasurement.UNMEASURED,
)
RUNS = 40
HALF = [i % 2 == 0 for i in range(RUNS)]
ALL = [True] * RUNS
POLICY = {"min_success_rate": 0.5}
RULE = {"outcome_type": "done", "value": True}
COST_RATIO = "cost_per_accepted_outcome_ratio"
DECIMAL_TEXT = re.compile(r"\d+(\.\d+)?([eE][-+]?\d+)?")


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def world(now=NOW):
    clock = FixedClock(now)
    store = MemoryStore()
    ecp = Ecp.build(
        store.unit_of_work, signer=Ed25519Signer.generate(), clock=clock, ids=SequentialIds("d")
    )
    return ecp, clock, store


def define(ecp, version, outcome_type="done", value=True):
    request = OutcomeDefinitionRequest(
        workflow_id="w",
        workflow_version=version,
        outcome_type=outcome_type,
        predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=value),
    )
    ecp.evidence.define_outcome(ACTOR, request)


def record(
    ecp,
    version,
    outcomes,
    *,
    costs="1.00",
    measurement=None,
    inferred=(),
    windows=2,
    at=None,
    first=0,
):
    """One charge and one outcome assertion per run; an outcome None leaves the run unresolved.

    ``costs`` is one decimal string for every run or one per run (None: unknown); runs alternate
    between ``windows`` capture windows. Returns the stored execution events.
    """
    events, assertions = [], []
    for offset, value in enumerate(outcomes):
        i = first + offset
        cost = costs if isinstance(costs, str) or costs is None else costs[offset]
        amount = None if cost is None else Decimal(cost)
        how = measurement or (UNMEASURED if amount is None else MEASURED)
        run = f"{version}-r{i:03d}"
        events.append(
            ExecutionEvent(
                event_id=f"{version}-e{i:03d}",
                workflow_id="w",
                workflow_version=version,
                run_id=run,
                occurred_at=at or START + timedelta(minutes=i),
                cost_usd=amount,
                cost_measurement=how,
                charge_id=f"{version}-c{i:03d}",
                source_window_id=f"{version}-sw{i % windows}",
            )
        )
        if value is not None:
            assertions.append(
                OutcomeEvent(
                    event_id=f"{version}-o{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    outcome_type="done",
                    asserted_at=ASSERTED,
                    value=value,
                    outcome_measurement=(
                        OutcomeMeasurement.INFERRED
                        if i in inferred
                        else OutcomeMeasurement.MEASURED
                    ),
                )
            )
    ecp.evidence.ingest_executions("t", events)
    if assertions:
        ecp.evidence.ingest_outcomes("t", assertions)
    return events


def scenario(*, base=None, cand=None, base_rule=RULE, cand_rule=RULE, now=NOW):
    """The standard scenario with ``record`` options changed per side."""
    ecp, clock, store = world(now)
    if base_rule is not None:
        define(ecp, "v1", **base_rule)
    if cand_rule is not None:
        define(ecp, "v2", **cand_rule)
    base_events = record(ecp, "v1", **({"outcomes": HALF} | (base or {})))
    cand_events = record(ecp, "v2", **({"outcomes": ALL} | (cand or {})))
    return ecp, clock, store, base_events, cand_events


def compare(ecp, policy=POLICY, **fields):
    body = {
        "workflow_id": "w",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": iso(START),
        "end": iso(END),
    }
    if policy is not None:
        body["policy"] = policy
    return ecp.decisions.compare(ACTOR, structure(body | fields, CompareRequest))


def decide(policy=POLICY, **changes):
    ecp, *_ = scenario(**changes)
    artifact, created = compare(ecp, policy)
    assert created
    return artifact


def statuses(artifact):
    return {c.name: c.status.value for c in artifact.constraints}


def ids_digest(event_ids):
    """``sha256:`` over the RFC 8785 array of ids sorted by code point (ASCII ids here)."""
    text = json.dumps(sorted(event_ids), separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def inventory(ecp, version, events, *, runs=None, windows=None, end=END):
    """Store the inventory these events honestly make, unless ``runs``/``windows`` say otherwise."""
    by_window = defaultdict(list)
    for event in events:
        by_window[event.source_window_id].append(event.event_id)
    if windows is None:
        windows = [
            SourceWindow(
                source_window_id=w, expected_events=len(ids), event_ids_digest=ids_digest(ids)
            )
            for w, ids in sorted(by_window.items())
        ]
    listed = sorted({e.run_id for e in events}) if runs is None else runs
    found = SourceInventory(
        event_id=f"inv-{version}",
        workflow_id="w",
        workflow_version=version,
        capture_start=START,
        capture_end=end,
        terminal_run_ids=tuple(listed),
        windows=tuple(windows),
    )
    ecp.evidence.ingest_inventories("t", [found])
    return found.event_id


def both_inventories(ecp, base_events, cand_events, **candidate_changes):
    return {
        "baseline_inventory_id": inventory(ecp, "v1", base_events),
        "candidate_inventory_id": inventory(ecp, "v2", cand_events, **candidate_changes),
    }


# --- the verdict ---------------------------------------------------------------------------


@pytest.mark.spec(
    "§4.4 interval-constraints", "§4.4 cost-growth-tolerance", "§4.4 confidence-level"
)
def test_the_standard_scenario_passes_and_recommends_reviewing_the_candidate():
    artifact = decide()
    assert artifact.verdict.value == "pass"
    assert artifact.recommended_action.value == "review_candidate"
    assert artifact.abstain_reasons == ()
    assert artifact.additional_runs_required is None
    assert [(c.name, c.method, c.status.value, c.limit) for c in artifact.constraints] == [
        ("candidate_success_rate", "wilson", "pass", 0.5),
        ("success_rate_change", "newcombe_hybrid_score", "pass", 0.0),
        (COST_RATIO, "log_ratio_delta", "pass", 1.1),  # default cost-growth tolerance: 10 %
    ]
    rate, change, ratio = artifact.constraints
    assert rate.estimate == 1.0
    assert change.estimate == 0.5
    assert ratio.estimate == pytest.approx(0.5)
    for constraint in artifact.constraints:
        low, high = constraint.interval
        assert low <= constraint.estimate <= high
    assert artifact.policy.confidence_level == 0.95


@pytest.mark.spec("§4.4 interval-constraints")
def test_a_constraint_wholly_beyond_its_limit_fails_and_keeps_the_baseline():
    artifact = decide(cand={"costs": "5.00"})  # cost per accepted outcome 2.5 times the baseline's
    assert artifact.verdict.value == "fail"
    assert artifact.recommended_action.value == "keep_baseline"
    assert artifact.abstain_reasons == ()
    assert statuses(artifact) == {
        "candidate_success_rate": "pass",
        "success_rate_change": "pass",
        COST_RATIO: "fail",
    }
    assert artifact.constraints[2].interval[0] > 1.1
    assert artifact.additional_runs_required is None


@pytest.mark.spec("§4.4 interval-constraints")
def test_a_failing_constraint_fails_even_beside_an_unresolved_one():
    artifact = decide({"min_success_rate": 0.3}, cand={"outcomes": HALF, "costs": "5.00"})
    assert statuses(artifact) == {
        "candidate_success_rate": "pass",
        "success_rate_change": "unresolved",
        COST_RATIO: "fail",
    }
    assert artifact.verdict.value == "fail"
    assert artifact.recommended_action.value == "keep_baseline"


@pytest.mark.spec("§4.4 interval-constraints")
def test_an_interval_across_its_limit_abstains_naming_it_and_the_runs_that_would_resolve_it():
    artifact = decide(cand={"costs": "2.00"})  # the same cost per accepted outcome as the baseline
    assert artifact.verdict.value == "abstain"
    assert artifact.recommended_action.value == "collect_more_evidence"
    assert artifact.abstain_reasons == (f"unresolved:{COST_RATIO}",)
    ratio = artifact.constraints[2]
    assert ratio.status.value == "unresolved"
    assert ratio.interval[0] < 1.1 < ratio.interval[1]
    assert ratio.additional_runs_required > 0
    assert artifact.additional_runs_required == ratio.additional_runs_required
    # The estimate is honest: that many more runs of the same make-up resolve the constraint.
    more = RUNS + artifact.additional_runs_required
    more += more % 2
    ecp, *_ = world()
    define(ecp, "v1")
    define(ecp, "v2")
    for start in range(0, more, 1000):
        size = min(1000, more - start)
        record(ecp, "v1", [i % 2 == 0 for i in range(size)], first=start)
        record(ecp, "v2", [True] * size, costs="2.00", first=start)
    resolved, _ = compare(ecp)
    assert statuses(resolved)[COST_RATIO] == "pass"


@pytest.mark.spec("§4.4 compare-same-version")
def test_comparing_a_version_with_itself_is_allowed():
    ecp, *_ = scenario()
    policy = {"min_success_rate": 0.3, "max_success_rate_drop": 0.5, "max_cost_growth": 1.0}
    artifact, created = compare(ecp, policy, candidate_version="v1")
    assert created
    assert artifact.verdict.value == "pass"
    assert artifact.calculation_inputs.baseline == artifact.calculation_inputs.candidate
    assert artifact.source_delivery.baseline == artifact.source_delivery.candidate
    assert artifact.outcome_semantics.baseline == artifact.outcome_semantics.candidate
    assert artifact.constraints[1].estimate == 0.0
    assert artifact.constraints[2].estimate == pytest.approx(1.0)


# --- abstain rules, each alone ---------------------------------------------------------------


@pytest.mark.spec("§4.4 min-success-rate")
@pytest.mark.parametrize(
    "policy", [None, {}, {"min_success_rate": None}], ids=["no-policy", "omitted", "null"]
)
def test_a_missing_min_success_rate_abstains(policy):
    artifact = decide(policy)
    assert artifact.verdict.value == "abstain"
    assert artifact.recommended_action.value == "collect_more_evidence"
    assert artifact.abstain_reasons == ("min_success_rate_missing",)
    assert artifact.policy.min_success_rate is None
    assert "candidate_success_rate" not in statuses(artifact)


@pytest.mark.spec("§4.4 min-success-rate")
def test_a_min_success_rate_of_zero_is_an_explicit_choice_that_can_pass():
    artifact = decide({"min_success_rate": 0})
    assert artifact.verdict.value == "pass"
    assert artifact.constraints[0].limit == 0.0


@pytest.mark.spec("§4.4 compare-abstains")
@pytest.mark.parametrize(
    ("policy", "changes"),
    [
        ({"min_success_rate": 0.5, "min_runs": RUNS + 1}, {}),
        (POLICY, {"cand": {"outcomes": [True] * 29}}),
    ],  # the default minimum is 30
    ids=["policy-minimum", "default-minimum"],
)
def test_too_few_runs_abstain(policy, changes):
    assert decide(policy, **changes).abstain_reasons == ("too_few_runs",)


@pytest.mark.spec("§4.4 compare-abstains")
def test_exactly_the_minimum_number_of_runs_is_enough():
    assert decide({"min_success_rate": 0.5, "min_runs": RUNS}).verdict.value == "pass"


@pytest.mark.spec("§4.4 compare-abstains")
@pytest.mark.parametrize("side", ["base", "cand"])
def test_low_outcome_coverage_abstains(side):
    outcomes = {"base": HALF, "cand": ALL}[side]
    # 35 of 40 runs resolved is below the default coverage of 0.9 ...
    short = {side: {"outcomes": [None] * 5 + outcomes[5:]}}
    assert decide(**short).abstain_reasons == ("low_outcome_coverage",)
    # ... unless the policy asks for less.
    assert (
        decide({"min_success_rate": 0.5, "min_outcome_coverage": 0.8}, **short).verdict.value
        == "pass"
    )


@pytest.mark.spec("§4.4 compare-abstains")
def test_exactly_the_minimum_outcome_coverage_is_enough():
    assert decide(cand={"outcomes": [None] * 4 + ALL[4:]}).verdict.value == "pass"  # 36 / 40


@pytest.mark.spec("§2.9 latest-outcome")
def test_an_outcome_asserted_in_the_future_does_not_resolve_a_run_yet():
    ecp, clock, *_ = scenario(cand={"outcomes": [None] * 5 + ALL[5:]})
    ecp.evidence.ingest_outcomes(
        "t",
        [
            OutcomeEvent(
                event_id=f"late{i}",
                workflow_id="w",
                workflow_version="v2",
                run_id=f"v2-r{i:03d}",
                outcome_type="done",
                asserted_at=NOW + timedelta(hours=1),
            )
            for i in range(5)
        ],
    )
    assert compare(ecp)[0].abstain_reasons == ("low_outcome_coverage",)
    clock.advance(3600)  # at asserted_at the assertions are current
    assert compare(ecp)[0].verdict.value == "pass"


@pytest.mark.spec("§4.4 compare-abstains", "§7 evidence-never-zero")
@pytest.mark.parametrize("side", ["base", "cand"])
def test_unmeasured_cost_abstains_and_is_never_counted_as_zero(side):
    costs = ["1.00"] * RUNS
    costs[3] = None
    artifact = decide(**{side: {"costs": costs}})
    assert artifact.abstain_reasons == ("unmeasured_cost",)
    rows = getattr(artifact.calculation_inputs, {"base": "baseline", "cand": "candidate"}[side])
    unknown = [row for row in rows if row.cost_usd is None]
    assert [(row.cost_measurement, row.runs) for row in unknown] == [("unmeasured", 1)]


@pytest.mark.spec("§2.9 charge-revisions")
def test_a_charge_revision_to_an_unknown_cost_makes_the_cost_unmeasured():
    ecp, *_ = scenario()
    ecp.evidence.ingest_revisions(
        "t",
        [
            ChargeRevision(
                event_id="rev1",
                charge_id="v1-c007",
                revised_at=T0 + timedelta(days=2),
                cost_usd=None,
                cost_measurement=UNMEASURED,
            )
        ],
    )
    assert compare(ecp)[0].abstain_reasons == ("unmeasured_cost",)


@pytest.mark.spec("§4.4 compare-abstains")
def test_estimated_cost_abstains_unless_the_policy_allows_estimates():
    costs = {"cand": {"costs": "1.00", "measurement": ESTIMATED}}
    assert decide(**costs).abstain_reasons == ("estimated_cost",)
    allowed = decide({"min_success_rate": 0.5, "allow_estimated_cost": True}, **costs)
    assert allowed.verdict.value == "pass"
    assert {row.cost_measurement for row in allowed.calculation_inputs.candidate} == {"estimated"}


@pytest.mark.spec("§4.4 compare-abstains")
def test_inferred_outcomes_abstain():
    assert decide(base={"inferred": {4}}).abstain_reasons == ("inferred_outcomes",)
    assert decide(cand={"inferred": {0}}).abstain_reasons == ("inferred_outcomes",)


@pytest.mark.spec("§2.9 latest-outcome")
def test_an_inferred_assertion_superseded_by_a_measured_one_does_not_count():
    ecp, *_ = scenario(cand={"inferred": {0}})
    ecp.evidence.ingest_outcomes(
        "t",
        [
            OutcomeEvent(
                event_id="measured-later",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r000",
                outcome_type="done",
                asserted_at=ASSERTED + timedelta(hours=1),
            )
        ],
    )
    assert compare(ecp)[0].verdict.value == "pass"


@pytest.mark.spec("§4.4 compare-abstains")
def test_a_baseline_without_accepted_outcomes_abstains():
    artifact = decide(base={"outcomes": [False] * RUNS})
    assert artifact.abstain_reasons == ("no_accepted_baseline_outcomes",)


@pytest.mark.spec("§4.4 compare-abstains")
def test_zero_baseline_cost_abstains():
    assert decide(base={"costs": "0"}).abstain_reasons == ("zero_baseline_cost",)
    # One observed non-zero cost is enough; the intervals decide (here: the candidate is dearer).
    nearly_free = decide(base={"costs": ["0"] * (RUNS - 1) + ["2.00"]})
    assert nearly_free.abstain_reasons == ()
    assert nearly_free.verdict.value == "fail"


@pytest.mark.spec("§4.4 compare-abstains")
def test_a_missing_outcome_definition_abstains():
    # Without a definition no run of that version is judged, so coverage must be waived for the
    # rule to stand alone.
    waived = {"min_success_rate": 0.5, "min_outcome_coverage": 0}
    artifact = decide(waived, cand_rule=None)
    assert artifact.abstain_reasons == ("outcome_definition_missing",)
    assert artifact.outcome_semantics.candidate is None
    assert artifact.outcome_semantics.baseline is not None
    assert {row.accepted for row in artifact.calculation_inputs.candidate} == {None}
    assert "outcome_definition_missing" in decide(base_rule=None).abstain_reasons


@pytest.mark.spec("§4.4 compare-abstains")
def test_different_outcome_definitions_abstain():
    artifact = decide(
        cand_rule={"outcome_type": "done", "value": "yes"}, cand={"outcomes": ["yes"] * RUNS}
    )
    assert artifact.abstain_reasons == ("outcome_definitions_differ",)
    assert artifact.outcome_semantics.baseline != artifact.outcome_semantics.candidate


@pytest.mark.spec("§4.4 source-inventory")
@pytest.mark.parametrize("named", ["baseline_inventory_id", "candidate_inventory_id"])
def test_an_inventory_for_one_version_only_abstains(named):
    ecp, _, _, base_events, cand_events = scenario()
    ids = both_inventories(ecp, base_events, cand_events)
    artifact, _ = compare(ecp, **{named: ids[named]})
    assert artifact.abstain_reasons == ("source_inventory_one_sided",)


@pytest.mark.spec("§4.4 source-inventory")
def test_matching_inventories_on_both_sides_pass():
    ecp, _, _, base_events, cand_events = scenario()
    artifact, _ = compare(ecp, **both_inventories(ecp, base_events, cand_events))
    assert artifact.verdict.value == "pass"
    assert artifact.source_delivery.candidate.source_windows == 2
    assert artifact.source_delivery.candidate.missing_runs == 0


@pytest.mark.spec("§4.4 source-inventory")
def test_an_inventory_capture_interval_includes_its_end():
    ecp, _, _, base_events, cand_events = scenario()
    cand_events += record(ecp, "v2", [True], at=END, first=RUNS)
    without, _ = compare(ecp)
    assert without.source_delivery.candidate.runs == RUNS  # the request window is half-open
    with_inventories, _ = compare(ecp, **both_inventories(ecp, base_events, cand_events))
    assert with_inventories.source_delivery.candidate.runs == RUNS + 1
    assert with_inventories.verdict.value == "pass"


def _unlisted(events):
    return {"runs": sorted({e.run_id for e in events} - {"v2-r005"})}


def _recount(events):
    ids = sorted(e.event_id for e in events if e.source_window_id == "v2-sw0")
    others = sorted(e.event_id for e in events if e.source_window_id == "v2-sw1")
    return {
        "windows": [
            SourceWindow(
                source_window_id="v2-sw0",
                expected_events=len(ids) + 1,
                event_ids_digest=ids_digest(ids),
            ),
            SourceWindow(
                source_window_id="v2-sw1",
                expected_events=len(others),
                event_ids_digest=ids_digest(others),
            ),
        ]
    }


def _other_ids(events):
    ids = sorted(e.event_id for e in events if e.source_window_id == "v2-sw0")
    others = sorted(e.event_id for e in events if e.source_window_id == "v2-sw1")
    swapped = [*ids[1:], "v2-e999"]
    return {
        "windows": [
            SourceWindow(
                source_window_id="v2-sw0",
                expected_events=len(ids),
                event_ids_digest=ids_digest(swapped),
            ),
            SourceWindow(
                source_window_id="v2-sw1",
                expected_events=len(others),
                event_ids_digest=ids_digest(others),
            ),
        ]
    }


def _partial_run(events):
    """Run v2-r000 had a second event the store never received."""
    ids = sorted([*(e.event_id for e in events if e.source_window_id == "v2-sw0"), "v2-e000b"])
    others = sorted(e.event_id for e in events if e.source_window_id == "v2-sw1")
    return {
        "windows": [
            SourceWindow(
                source_window_id="v2-sw0",
                expected_events=len(ids),
                event_ids_digest=ids_digest(ids),
            ),
            SourceWindow(
                source_window_id="v2-sw1",
                expected_events=len(others),
                event_ids_digest=ids_digest(others),
            ),
        ]
    }


def _undeclared_window(events):
    ids = sorted(e.event_id for e in events if e.source_window_id == "v2-sw0")
    return {
        "windows": [
            SourceWindow(
                source_window_id="v2-sw0",
                expected_events=len(ids),
                event_ids_digest=ids_digest(ids),
            )
        ]
    }


@pytest.mark.spec("§4.4 source-inventory")
@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (_unlisted, "runs the inventory does not list: v2-r005"),
        (_recount, "capture window v2-sw0: 20 events, 21 expected"),
        (_other_ids, "capture window v2-sw0: event ids differ"),
        (_partial_run, "capture window v2-sw0: 20 events, 21 expected"),
        (_undeclared_window, "capture window v2-sw1 is not in the inventory"),
    ],
    ids=["unexpected-records", "window-count", "window-digest", "partial-run", "unknown-window"],
)
def test_an_inventory_mismatch_abstains_and_names_the_problem(change, problem):
    ecp, _, _, base_events, cand_events = scenario()
    artifact, _ = compare(
        ecp, **both_inventories(ecp, base_events, cand_events, **change(cand_events))
    )
    assert artifact.abstain_reasons == ("source_inventory_mismatch",)
    assert artifact.verdict.value == "abstain"
    assert any(problem in limitation for limitation in artifact.limitations)


@pytest.mark.spec("§4.4 source-inventory")
def test_an_event_naming_no_capture_window_is_a_mismatch_under_an_inventory():
    ecp, _, _, base_events, cand_events = scenario()
    ids = both_inventories(ecp, base_events, cand_events)
    ecp.evidence.ingest_executions(
        "t",
        [
            ExecutionEvent(
                event_id="v2-e000b",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r000",
                occurred_at=START,
                cost_usd=Decimal("0.01"),
                cost_measurement=MEASURED,
                charge_id="v2-c000b",
            )
        ],
    )
    artifact, _ = compare(ecp, **ids)
    assert artifact.abstain_reasons == ("source_inventory_mismatch",)
    assert any("1 events name no capture window" in text for text in artifact.limitations)
    # Without inventories the same evidence is only priced, not checked.
    assert compare(ecp)[0].verdict.value == "pass"


@pytest.mark.spec("§4.4 source-inventory")
def test_runs_missing_from_the_store_stay_visible_with_unknown_cost():
    ecp, _, _, base_events, cand_events = scenario()
    runs = [*sorted({e.run_id for e in cand_events}), "v2-lost"]
    artifact, _ = compare(ecp, **both_inventories(ecp, base_events, cand_events, runs=runs))
    assert artifact.verdict.value == "abstain"
    assert "unmeasured_cost" in artifact.abstain_reasons
    assert artifact.source_delivery.candidate.missing_runs == 1
    assert artifact.source_delivery.candidate.runs == RUNS + 1
    missing = [row for row in artifact.calculation_inputs.candidate if row.cost_usd is None]
    assert [(r.cost_measurement, r.accepted, r.outcome_measurement, r.runs) for r in missing] == [
        ("unmeasured", None, None, 1)
    ]


@pytest.mark.spec("§4.4 confidence-level")
def test_every_confidence_level_the_policy_accepts_can_be_compared():
    artifact = decide({"min_success_rate": 0.5, "confidence_level": 1 - 2**-53})
    assert artifact.policy.confidence_level == 1 - 2**-53


# --- immutability and revisions --------------------------------------------------------------


@pytest.mark.spec("§4.4 decision-revisions")
def test_the_same_request_over_the_same_evidence_returns_the_original_artifact():
    ecp, clock, *_ = scenario()
    first, created = compare(ecp)
    assert created
    assert first.revision == 1
    clock.advance(3600)
    again, created = compare(ecp)
    assert not created
    assert again == first
    # The same request spelt differently: defaults written out, another UTC spelling.
    spelt = {**POLICY, "confidence_level": 0.95, "max_cost_growth": 0.1, "min_runs": 30}
    same, created = compare(ecp, spelt, start="2026-11-01T00:00:00+00:00")
    assert not created
    assert same.decision_id == first.decision_id


@pytest.mark.spec("§4.4 decision-revisions")
def test_changed_policy_or_evidence_makes_a_new_revision():
    ecp, *_ = scenario()
    first, _ = compare(ecp)
    stricter, created = compare(ecp, {"min_success_rate": 0.5, "confidence_level": 0.99})
    assert created
    assert stricter.revision == 2
    assert stricter.decision_id != first.decision_id
    assert stricter.policy.confidence_level == 0.99
    # One more execution event of an existing run changes the selected evidence.
    ecp.evidence.ingest_executions(
        "t",
        [
            ExecutionEvent(
                event_id="v2-extra",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r000",
                occurred_at=START + timedelta(hours=5),
                cost_usd=Decimal("0.01"),
                cost_measurement=MEASURED,
                charge_id="v2-extra",
                source_window_id="v2-sw0",
            )
        ],
    )
    newer, created = compare(ecp)
    assert created
    assert newer.revision == 3
    assert newer.source_evidence.fingerprint != first.source_evidence.fingerprint
    assert newer.request_digest == first.request_digest
    assert newer.source_delivery.candidate.execution_events == RUNS + 1
    # Evidence outside the window, or of another workflow, changes nothing.
    ecp.evidence.ingest_executions(
        "t",
        [
            ExecutionEvent(
                event_id="late",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r001",
                occurred_at=END,
                cost_usd=Decimal(1),
                cost_measurement=MEASURED,
                charge_id="late",
            )
        ],
    )
    assert compare(ecp)[0].decision_id == newer.decision_id


@pytest.mark.spec("§4.4 decision-revisions")
def test_a_future_outcome_makes_a_new_revision_once_the_clock_passes_it():
    ecp, clock, *_ = scenario()
    first, _ = compare(ecp)
    ecp.evidence.ingest_outcomes(
        "t",
        [
            OutcomeEvent(
                event_id="v2-recant",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r000",
                outcome_type="done",
                asserted_at=NOW + timedelta(hours=2),
                value=False,
            )
        ],
    )
    assert compare(ecp) == (first, False)
    clock.advance(2 * 3600)
    later, created = compare(ecp)
    assert created
    assert later.revision == 2
    assert later.as_of == NOW + timedelta(hours=2)
    accepted = sum(row.runs for row in later.calculation_inputs.candidate if row.accepted)
    assert accepted == RUNS - 1


@pytest.mark.spec("§2.9 evidence-tenant-boundary")
def test_another_tenants_evidence_is_not_seen():
    ecp, *_ = scenario()
    first, _ = compare(ecp)
    ecp.evidence.ingest_executions(
        "other",
        [
            ExecutionEvent(
                event_id="x",
                workflow_id="w",
                workflow_version="v2",
                run_id="v2-r000",
                occurred_at=START,
                cost_usd=Decimal(9),
                cost_measurement=MEASURED,
                charge_id="x",
            )
        ],
    )
    assert compare(ecp) == (first, False)
    assert ecp.decisions.history("other", limit=10) == ([], None)


# --- the artifact ----------------------------------------------------------------------------


@pytest.mark.spec("§2.9 decision-artifact", "§9 method-versions")
def test_the_artifact_names_its_claim_method_evidence_binding_and_limitations():
    artifact = decide()
    assert artifact.claim_class == "observed_comparison"
    assert artifact.method_version == "interval-policy/1"
    assert artifact.source_evidence.binding == "stored-assertions/1"
    assert artifact.source_evidence.tags == ("v2", "v3", "v4", "v5")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", artifact.source_evidence.fingerprint)
    assert artifact.calculation_inputs.version == "run-economics/1"
    assert artifact.limitations
    assert any("not a randomized experiment" in text for text in artifact.limitations)
    assert artifact.requested_by == "analyst"
    assert artifact.tenant_id == "t"
    assert artifact.as_of == artifact.created_at == NOW
    delivery = artifact.source_delivery.baseline
    assert (
        delivery.runs,
        delivery.execution_events,
        delivery.outcome_assertions,
        delivery.source_windows,
        delivery.missing_runs,
    ) == (RUNS, RUNS, RUNS, 2, 0)
    wire = unstructure(artifact)
    assert json.loads(json.dumps(wire)) == wire
    assert structure(wire, DecisionArtifact) == artifact
    assert method_fields(wire) == ("observed_comparison", "interval-policy/1")


@pytest.mark.spec("§2.9 decision-artifact")
def test_outcome_semantics_are_equal_across_versions_with_the_same_rule():
    artifact = decide()
    assert artifact.outcome_semantics.baseline == artifact.outcome_semantics.candidate
    assert artifact.outcome_semantics.baseline.startswith("sha256:")
    other_type = decide(cand_rule={"outcome_type": "closed", "value": True})
    assert other_type.outcome_semantics.baseline != other_type.outcome_semantics.candidate


@pytest.mark.spec("§2.9 calculation-inputs")
def test_calculation_inputs_group_identical_runs_with_exact_costs():
    ecp, *_ = scenario(base={"costs": ["1E-8", "0.10", *["1.00"] * (RUNS - 2)]})
    # A run of two charges sums exactly; a revision prices a charge.
    ecp.evidence.ingest_executions(
        "t",
        [
            ExecutionEvent(
                event_id="v1-e001b",
                workflow_id="w",
                workflow_version="v1",
                run_id="v1-r001",
                occurred_at=START,
                cost_usd=Decimal("0.2"),
                cost_measurement=MEASURED,
                charge_id="v1-c001b",
                source_window_id="v1-sw1",
            )
        ],
    )
    ecp.evidence.ingest_revisions(
        "t",
        [
            ChargeRevision(
                event_id="rev",
                charge_id="v1-c002",
                revised_at=T0 + timedelta(days=2),
                cost_usd=Decimal("123456789012345.123456789012345678"),
                cost_measurement=MEASURED,
            )
        ],
    )
    artifact, _ = compare(ecp)
    inputs = artifact.calculation_inputs
    rows = {(Decimal(r.cost_usd), r.accepted): r for r in inputs.baseline}
    assert all(DECIMAL_TEXT.fullmatch(r.cost_usd) for r in inputs.baseline)
    assert rows[Decimal("1E-8"), True].runs == 1  # run 0: the exponent input, exactly
    assert rows[Decimal("0.3"), False].runs == 1  # run 1: 0.10 + 0.2
    assert rows[Decimal("123456789012345.123456789012345678"), True].runs == 1  # run 2, revised
    assert rows[Decimal("1.00"), True].runs == RUNS // 2 - 2
    assert rows[Decimal("1.00"), False].runs == RUNS // 2 - 1
    assert len(inputs.baseline) == 5
    assert sum(r.runs for r in inputs.baseline) == artifact.source_delivery.baseline.runs == RUNS
    assert [
        (r.cost_usd, r.cost_measurement, r.accepted, r.outcome_measurement, r.runs)
        for r in inputs.candidate
    ] == [("1.00", "measured", True, "measured", RUNS)]
    assert artifact.source_delivery.baseline.charge_revisions == 1
    assert artifact.source_delivery.baseline.execution_events == RUNS + 1
    wire_rows = unstructure(artifact)["calculation_inputs"]["baseline"]
    assert {tuple(row) for row in wire_rows} == {
        ("cost_usd", "cost_measurement", "accepted", "outcome_measurement", "runs")
    }


@pytest.mark.spec("§4.4 decision-history", "C1 list-paging")
def test_history_lists_newest_first_with_cursor_paging_and_keeps_the_original_inputs():
    ecp, clock, *_ = scenario()
    # Three at one instant (ordered by id among themselves), then two a minute apart.
    made = [
        compare(ecp, {"min_success_rate": 0.5, "confidence_level": level})[0]
        for level in (0.9, 0.95, 0.99)
    ]
    for level in (0.8, 0.85):
        clock.advance(60)
        made.append(compare(ecp, {"min_success_rate": 0.5, "confidence_level": level})[0])
    # New evidence: a new artifact, and the old ones keep their inputs.
    record(ecp, "v2", [False] * 3, first=RUNS)
    made.append(compare(ecp, {"min_success_rate": 0.5, "confidence_level": 0.9})[0])
    expected = sorted(made, key=lambda a: (a.created_at, a.decision_id), reverse=True)
    seen, cursor = [], None
    while True:
        page, cursor = ecp.decisions.history("t", limit=2, cursor=cursor)
        assert len(page) <= 2
        seen += page
        if cursor is None:
            break
    assert [a.decision_id for a in seen] == [a.decision_id for a in expected]
    assert seen == expected  # every artifact exactly as first returned
    assert seen[0].calculation_inputs != seen[-1].calculation_inputs
    assert ecp.decisions.history("t", limit=10, workflow_id="w")[0] == expected
    assert ecp.decisions.history("t", limit=10, workflow_id="other") == ([], None)
    assert ecp.decisions.history("t", limit=len(made)) == (expected, None)


@pytest.mark.spec("C1 list-paging")
def test_a_cursor_this_service_did_not_issue_is_refused():
    ecp, *_ = scenario()
    with pytest.raises(ValidationFailed, match="invalid cursor"):
        ecp.decisions.history("t", limit=2, cursor="not-a-cursor")


@pytest.mark.spec("§9 method-versions")
@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({}, ("legacy_unclassified", "legacy_unversioned")),
        (
            {"claim_class": None, "method_version": None},
            ("legacy_unclassified", "legacy_unversioned"),
        ),
        ({"claim_class": "", "method_version": ""}, ("legacy_unclassified", "legacy_unversioned")),
        (
            {"claim_class": 3, "method_version": ["x"]},
            ("legacy_unclassified", "legacy_unversioned"),
        ),
        ({"method_version": "interval-policy/1"}, ("legacy_unclassified", "interval-policy/1")),
        (
            {"claim_class": "observed_comparison", "method_version": "interval-policy/1"},
            ("observed_comparison", "interval-policy/1"),
        ),
    ],
)
def test_method_fields_read_legacy_payloads(payload, expected):
    assert method_fields(payload) == expected


# --- refusals --------------------------------------------------------------------------------


def test_an_empty_window_is_refused():
    ecp, *_ = scenario()
    with pytest.raises(ValidationFailed, match="empty"):
        compare(ecp, end=iso(START))


@pytest.mark.spec("§4.4 source-inventory")
def test_an_unknown_inventory_or_one_of_another_version_is_refused():
    ecp, _, _, base_events, _ = scenario()
    with pytest.raises(ValidationFailed, match="unknown source inventory"):
        compare(ecp, baseline_inventory_id="nope", candidate_inventory_id="nope")
    wrong = inventory(ecp, "v1", base_events)
    with pytest.raises(ValidationFailed, match="another version"):
        compare(ecp, baseline_inventory_id=wrong, candidate_inventory_id=wrong)
    assert ecp.decisions.history("t", limit=10) == ([], None)


@pytest.mark.parametrize(
    "policy",
    [
        {"min_success_rate": 1.5},
        {"min_success_rate": 0.5, "confidence_level": 1},
        {"min_success_rate": 0.5, "confidence_level": 0},
        {"min_success_rate": 0.5, "min_runs": 1},
        {"min_success_rate": 0.5, "max_cost_growth": -0.1},
    ],
)
def test_a_policy_outside_its_ranges_is_refused(policy):
    with pytest.raises(ValidationFailed):
        structure(
            {
                "workflow_id": "w",
                "baseline_version": "v1",
                "candidate_version": "v2",
                "start": iso(START),
                "end": iso(END),
                "policy": policy,
            },
            CompareRequest,
        )


# --- schedules -------------------------------------------------------------------------------


def schedule_request(**fields):
    body = {
        "workflow_id": "w",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "interval_seconds": 86_400,
        "window_seconds": 30 * 86_400,
        "policy": POLICY,
    }
    return structure(body | fields, CreateScheduleRequest)


@pytest.mark.spec("§4.4 decision-schedules", "§9.1 schedule-claims")
def test_a_schedule_runs_when_due_once_per_occurrence():
    ecp, clock, *_ = scenario()
    schedule = ecp.decisions.create_schedule(ACTOR, schedule_request(name="nightly"))
    assert schedule.next_run_at == NOW  # due at once
    assert ecp.decisions.run_due() == [schedule.schedule_id]
    (stored,) = ecp.decisions.schedules("t")
    (artifact,), _ = ecp.decisions.history("t", limit=10)
    assert stored.last_decision_id == artifact.decision_id
    assert (stored.last_run_at, stored.last_error) == (NOW, None)
    assert stored.next_run_at == NOW + timedelta(days=1)
    assert artifact.schedule_id == schedule.schedule_id
    assert artifact.requested_by == f"schedule:{schedule.schedule_id}"
    assert (artifact.start, artifact.end) == (NOW - timedelta(days=30), NOW)
    assert artifact.verdict.value == "pass"
    assert artifact.method_version == "interval-policy/1"
    # The same instant again: nothing is due.
    assert ecp.decisions.run_due() == []
    clock.advance(86_399)
    assert ecp.decisions.run_due() == []
    clock.advance(1)
    assert ecp.decisions.run_due() == [schedule.schedule_id]
    (stored,) = ecp.decisions.schedules("t")
    newest, _ = ecp.decisions.history("t", limit=1)
    assert stored.last_decision_id == newest[0].decision_id != artifact.decision_id
    assert len(ecp.decisions.history("t", limit=10)[0]) == 2


@pytest.mark.spec("§4.4 decision-schedules")
def test_missed_occurrences_run_once_and_the_next_is_an_interval_later():
    ecp, clock, *_ = scenario()
    schedule = ecp.decisions.create_schedule(ACTOR, schedule_request())
    clock.advance(3 * 86_400 + 5)
    assert ecp.decisions.run_due() == [schedule.schedule_id]
    assert ecp.decisions.run_due() == []
    (stored,) = ecp.decisions.schedules("t")
    assert stored.next_run_at == clock.now() + timedelta(days=1)


@pytest.mark.spec("§9.1 schedule-claims")
def test_a_claim_holding_a_stale_next_run_is_refused():
    ecp, _, store, *_ = scenario()
    schedule = ecp.decisions.create_schedule(ACTOR, schedule_request())
    with store.unit_of_work() as uow:
        (seen,) = uow.decisions.due(NOW, limit=10)  # another process reads the due occurrence
    assert ecp.decisions.run_due() == [schedule.schedule_id]  # ... and this one claims it first
    with store.unit_of_work() as uow:
        assert (
            uow.decisions.claim_occurrence(
                seen.schedule_id, seen.next_run_at, NOW + timedelta(days=1)
            )
            is False
        )
        uow.commit()
    (stored,) = ecp.decisions.schedules("t")
    assert stored.next_run_at == NOW + timedelta(days=1)
    assert len(ecp.decisions.history("t", limit=10)[0]) == 1
    with store.unit_of_work() as uow:  # the value actually held is claimed
        assert (
            uow.decisions.claim_occurrence(
                seen.schedule_id, stored.next_run_at, NOW + timedelta(days=5)
            )
            is True
        )
        uow.commit()
    assert ecp.decisions.schedules("t")[0].next_run_at == NOW + timedelta(days=5)


@pytest.mark.spec("§4.4 decision-schedules")
def test_schedules_are_listed_per_tenant_oldest_first():
    ecp, clock, *_ = scenario()
    first = ecp.decisions.create_schedule(ACTOR, schedule_request())
    clock.advance(1)
    second = ecp.decisions.create_schedule(ACTOR, schedule_request(candidate_version="v1"))
    other = attrs.evolve(ACTOR, tenant_id="other")
    ecp.decisions.create_schedule(other, schedule_request())
    assert [s.schedule_id for s in ecp.decisions.schedules("t")] == [
        first.schedule_id,
        second.schedule_id,
    ]


@pytest.mark.spec("§4.4 decision-schedules")
@pytest.mark.parametrize(
    "fields", [{"interval_seconds": 86_399}, {"window_seconds": 3599}, {"name": " "}]
)
def test_a_schedule_outside_its_ranges_is_refused(fields):
    with pytest.raises(ValidationFailed):
        schedule_request(**fields)


@pytest.mark.spec("§9 historical-reports")
def test_a_historical_artifact_without_inputs_reads_them_as_null():
    artifact = decide()
    payload = unstructure(artifact)
    for field in ("calculation_inputs", "source_evidence", "source_delivery", "outcome_semantics"):
        del payload[field]
    historical = structure(payload, DecisionArtifact)
    assert historical.calculation_inputs is None
    assert historical.source_evidence is None
    assert unstructure(historical)["calculation_inputs"] is None
    assert historical.verdict == artifact.verdict
