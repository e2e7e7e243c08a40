"""DecisionRepository, and the evidence reads comparisons make, on every store.

Retained artifacts are found by request digest and evidence fingerprint, counted per compared
subject, paged newest first, kept per tenant and read back exactly (floats and exponent-notation
cost strings included). Schedules are listed, come due in order, are claimed by a conditional
update (a stale claim changes nothing) and record their runs. Two properties hold on random
evidence: an adapter's ``EvidenceRepository.select`` equals the in-memory reference
(:func:`ecp_core.decisions.selection.select`) with either window end, and a whole
``DecisionService.compare`` artifact is the same on both stores.
"""

import itertools
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.model import (
    CLAIM_CLASS,
    INPUTS_VERSION,
    METHOD_VERSION,
    SOURCE_BINDING,
    SOURCE_TAGS,
    CalculationInputs,
    CalculationRow,
    CompareRequest,
    ComparisonPolicy,
    ConstraintResult,
    ConstraintStatus,
    DecisionArtifact,
    DecisionSchedule,
    Delivery,
    OutcomeSemantics,
    RecommendedAction,
    SourceDelivery,
    SourceEvidence,
    Verdict,
)
from ecp_core.decisions.policy import STANDING_LIMITATIONS
from ecp_core.decisions.selection import Selection, VersionWindow, economics, ids_digest
from ecp_core.errors import Conflict
from ecp_core.evidence.model import (
    ChargeRevision,
    CostMeasurement,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    PredicateKind,
    SourceInventory,
    SourceWindow,
    SuccessPredicate,
    digest_of,
)
from ecp_core.memory import MemoryStore
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import amounts, costs, digested, revised_costs
from ecp_core.wire import structure, unstructure

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
START, END = NOW - timedelta(days=10), NOW
MICRO = timedelta(microseconds=1)
COST_RATIO = "cost_per_accepted_outcome_ratio"


def exact(value: object) -> str:
    """The JSON text of a model: equal texts mean equal floats (-0.0, 1.0 vs 1) and strings."""
    return json.dumps(unstructure(value), sort_keys=True)


# --- artifacts -------------------------------------------------------------------------------


def artifact(
    decision_id: str = "d1",
    *,
    tenant: str = "t1",
    created_at: datetime = NOW,
    workflow_id: str = "wf",
    baseline: str = "v1",
    candidate: str = "v2",
    start: datetime = START,
    end: datetime = END,
    request_digest: str = "sha256:request-1",
    schedule_id: str | None = None,
) -> DecisionArtifact:
    """A retained artifact whose fields are hard to keep exactly.

    Floats at the edges of the double range, negative zero, exponent-notation and long cost
    strings, unicode text.
    """
    return DecisionArtifact(
        decision_id=decision_id,
        revision=3,
        tenant_id=tenant,
        workflow_id=workflow_id,
        baseline_version=baseline,
        candidate_version=candidate,
        start=start,
        end=end,
        verdict=Verdict.ABSTAIN,
        recommended_action=RecommendedAction.COLLECT_MORE_EVIDENCE,
        claim_class=CLAIM_CLASS,
        method_version=METHOD_VERSION,
        abstain_reasons=(f"unresolved:{COST_RATIO}",),
        limitations=(*STANDING_LIMITATIONS, "capture window fenêtre-1: 3 events, 4 expected"),
        constraints=(
            ConstraintResult(
                name="candidate_success_rate",
                method="wilson",
                estimate=0.1 + 0.2,
                interval=(1 / 3, 2 / 3),
                limit=0.5,
                status=ConstraintStatus.PASS,
            ),
            ConstraintResult(
                name="success_rate_change",
                method="newcombe_hybrid_score",
                estimate=-0.0,
                interval=(-1.0, 1.0),
                limit=0.0,
                status=ConstraintStatus.UNRESOLVED,
                additional_runs_required=12_345,
            ),
            ConstraintResult(
                name=COST_RATIO,
                method="log_ratio_delta",
                estimate=1.7976931348623157e308,
                interval=(5e-324, 1e300),
                limit=1.1,
                status=ConstraintStatus.UNRESOLVED,
                additional_runs_required=2**40,
            ),
            ConstraintResult(
                name="empty",
                method="log_ratio_delta",
                estimate=None,
                interval=None,
                limit=None,
                status=ConstraintStatus.UNRESOLVED,
            ),
        ),
        additional_runs_required=2**40,
        source_evidence=SourceEvidence(
            binding=SOURCE_BINDING, tags=SOURCE_TAGS, fingerprint="sha256:" + "f" * 64
        ),
        source_delivery=SourceDelivery(
            baseline=Delivery(
                runs=40,
                execution_events=41,
                unattributed_events=0,
                outcome_assertions=40,
                provisional_outcomes=1,
                charge_revisions=2,
                source_windows=2,
                missing_runs=0,
            ),
            candidate=Delivery(
                runs=0,
                execution_events=0,
                unattributed_events=0,
                outcome_assertions=0,
                provisional_outcomes=0,
                charge_revisions=0,
                source_windows=0,
                missing_runs=3,
            ),
        ),
        outcome_semantics=OutcomeSemantics(baseline="sha256:" + "a" * 64, candidate=None),
        calculation_inputs=CalculationInputs(
            version=INPUTS_VERSION,
            baseline=(
                CalculationRow(
                    cost_usd="1E-8",
                    cost_measurement="measured",
                    accepted=True,
                    outcome_measurement="measured",
                    runs=1,
                ),
                CalculationRow(
                    cost_usd="1.5E+3",
                    cost_measurement="estimated",
                    accepted=False,
                    outcome_measurement="inferred",
                    runs=2,
                ),
                CalculationRow(
                    cost_usd="0.000",
                    cost_measurement="measured",
                    accepted=None,
                    outcome_measurement=None,
                    runs=3,
                ),
                CalculationRow(
                    cost_usd="123456789012345.123456789012345678",
                    cost_measurement="measured",
                    accepted=True,
                    outcome_measurement="measured",
                    runs=34,
                ),
            ),
            candidate=(
                CalculationRow(
                    cost_usd=None,
                    cost_measurement="unmeasured",
                    accepted=None,
                    outcome_measurement=None,
                    runs=3,
                ),
            ),
        ),
        policy=ComparisonPolicy(
            min_success_rate=0.0,
            confidence_level=1 - 2**-53,
            max_cost_growth=1e-9,
            max_success_rate_drop=0.25,
            min_runs=2,
            min_outcome_coverage=1.0,
            allow_estimated_cost=True,
        ),
        request_digest=request_digest,
        as_of=created_at,
        created_at=created_at,
        requested_by="analyst é",
        schedule_id=schedule_id,
    )


def compare_request(**fields: Any) -> CompareRequest:
    """A comparison of wf v2 against v1 over [START, END); ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": START,
        "end": END,
    } | fields
    return CompareRequest(**values)


# --- schedules -------------------------------------------------------------------------------


def schedule(
    schedule_id: str = "s1",
    *,
    tenant: str = "t1",
    created_at: datetime = NOW,
    next_run_at: datetime = NOW,
    name: str | None = "nightly",
) -> DecisionSchedule:
    """A daily comparison schedule of wf v2 against v1."""
    return DecisionSchedule(
        schedule_id=schedule_id,
        tenant_id=tenant,
        workflow_id="wf",
        baseline_version="v1",
        candidate_version="v2",
        interval_seconds=86_400,
        window_seconds=30 * 86_400,
        policy=ComparisonPolicy(min_success_rate=0.5, confidence_level=0.9, max_cost_growth=0.1),
        name=name,
        created_at=created_at,
        created_by="analyst",
        next_run_at=next_run_at,
    )


def stored(uow: UnitOfWorkFactory, tenant: str = "t1") -> dict[str, DecisionSchedule]:
    """The tenant's schedules by id."""
    with uow() as tx:
        return {s.schedule_id: s for s in tx.decisions.schedules(tenant)}


# --- source inventories ----------------------------------------------------------------------


# --- the adapter's selection equals the reference -------------------------------------------

BASE = datetime(2026, 11, 1, 6, 0, 0, 250_000, tzinfo=UTC)  # microseconds on purpose
W_START, W_END = BASE, BASE + timedelta(hours=6)
AS_OF = W_END + timedelta(days=1)
moments = st.one_of(
    st.sampled_from(
        [W_START, W_END, W_START - MICRO, W_START + MICRO, W_END - MICRO, W_END + MICRO]
    ),
    st.builds(lambda seconds: BASE + timedelta(seconds=seconds), st.integers(-3600, 8 * 3600)),
)
assertion_moments = st.one_of(moments, st.just(AS_OF), st.just(AS_OF + MICRO))
money = amounts(
    [
        Decimal(0),
        Decimal("0.000"),
        Decimal("1E-8"),
        Decimal("0.25"),
        Decimal("1.00"),
        Decimal(999999999999999),
    ],
    exponents=(-12, 0),
)
versions = st.sampled_from(["v1", "v1", "v1", "v2", "v2", "v2", "V1"])
workflows = st.sampled_from(["wf"] * 6 + ["wf2"])
runs = st.sampled_from(["r1", "r2", "r3", "r4", "r5", "r6", "R1"])
outcome_values = st.sampled_from([True, True, False, 1, 0.5, 2, "yes"])


@st.composite
def executions(draw: st.DrawFn, index: int) -> ExecutionEvent:
    """Execution event ``index``."""
    cost = draw(
        costs(
            money,
            summary_odds=7,
            measurements=[CostMeasurement.MEASURED] * 4 + list(CostMeasurement),
        )
    )
    return ExecutionEvent(
        event_id=f"e{index:02d}",
        workflow_id=draw(workflows),
        workflow_version=draw(versions),
        occurred_at=draw(moments),
        run_id=draw(st.one_of(st.none(), runs, runs)),
        cost_usd=cost.cost_usd,
        cost_measurement=cost.measurement,
        cost_role=cost.role,
        charge_id=None if cost.summary else f"c{index:02d}",
        source_window_id=draw(st.sampled_from([None, "w1", "w2", "w2"])),
    )


@st.composite
def outcomes(draw: st.DrawFn, index: int) -> OutcomeEvent:
    """Outcome event ``index`` (its id's case varies)."""
    return OutcomeEvent(
        event_id=draw(st.sampled_from(["o", "O", "p"])) + f"{index:02d}",  # ties of case
        workflow_id=draw(workflows),
        workflow_version=draw(versions),
        run_id=draw(st.one_of(runs, st.just("r9"))),
        outcome_type=draw(st.sampled_from(["done", "done", "done", "other"])),
        asserted_at=draw(assertion_moments),
        value=draw(outcome_values),
        outcome_measurement=draw(
            st.sampled_from([OutcomeMeasurement.MEASURED] * 3 + list(OutcomeMeasurement))
        ),
        maturity=draw(st.sampled_from(OutcomeMaturity)),
    )


@st.composite
def revisions(draw: st.DrawFn, index: int, charges: list[str]) -> ChargeRevision:
    """Revision ``index`` of one of ``charges`` (or of an unknown charge)."""
    cost, measurement = draw(revised_costs(money))
    return ChargeRevision(
        event_id=f"rev{index}",
        charge_id=draw(st.sampled_from([*charges, "c-unknown"])),
        revised_at=draw(moments),
        cost_usd=cost,
        cost_measurement=measurement,
    )


predicates = st.sampled_from(
    [
        SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
        SuccessPredicate(kind=PredicateKind.AT_LEAST, threshold=Decimal("0.5")),
    ]
)


Comparison = tuple[str, dict[str, Any], str]
"""A comparison: the candidate version, the policy's JSON, the inventory mode."""


@attrs.frozen
class Evidence:
    """One tenant's evidence; definitions as (workflow, version, outcome type, predicate)."""

    executions: tuple[ExecutionEvent, ...]
    outcomes: tuple[OutcomeEvent, ...]
    revisions: tuple[ChargeRevision, ...]
    definitions: tuple[tuple[str, str, str, SuccessPredicate], ...]  # workflow, version, type


@st.composite
def evidence(draw: st.DrawFn) -> Evidence:
    """Random evidence of workflows wf and wf2 around the comparison window."""
    size = draw(st.integers(0, 40))
    events = tuple(draw(executions(index)) for index in range(size))
    charges = [e.charge_id for e in events if e.charge_id is not None] or ["c00"]
    asserted = tuple(draw(outcomes(index)) for index in range(draw(st.integers(0, 30))))
    revised = tuple(draw(revisions(index, charges)) for index in range(draw(st.integers(0, 6))))
    definitions = tuple(
        (workflow, version, draw(st.sampled_from(["done", "done", "other"])), draw(predicates))
        for workflow, version in [("wf", "v1"), ("wf", "v2"), ("wf", "V1"), ("wf2", "v1")]
        if draw(st.integers(0, 4)) > 0
    )
    return Evidence(events, asserted, revised, definitions)


@st.composite
def comparisons(draw: st.DrawFn) -> Comparison:
    """A comparison over the window, optionally with an inventory for both versions."""
    candidate = draw(st.sampled_from(["v2", "v2", "v1"]))
    policy = {
        "min_success_rate": draw(st.sampled_from([0.5, 0.0, None])),
        "min_runs": 2,
        "min_outcome_coverage": draw(st.sampled_from([0.0, 0.5, 0.9])),
        "allow_estimated_cost": draw(st.booleans()),
        "max_cost_growth": draw(st.sampled_from([0.1, 10.0])),
    }
    inventories = draw(st.sampled_from(["none", "none", "honest", "missing_run", "fewer_events"]))
    return candidate, policy, inventories


def load(unit_of_work: UnitOfWorkFactory, tenant: str, data: Evidence) -> None:
    """Store ``data`` as ``tenant``'s evidence."""
    with unit_of_work() as tx:
        tx.evidence.add_executions(tenant, [digested(e) for e in data.executions])
        tx.evidence.add_outcomes(tenant, [digested(o) for o in data.outcomes])
        tx.evidence.add_revisions(tenant, [digested(r) for r in data.revisions])
        for workflow, version, outcome_type, predicate in data.definitions:
            tx.evidence.add_definition(
                OutcomeDefinition(
                    tenant_id=tenant,
                    workflow_id=workflow,
                    workflow_version=version,
                    outcome_type=outcome_type,
                    predicate=predicate,
                    digest=digest_of(predicate),
                    created_at=BASE,
                    created_by="admin",
                )
            )
        tx.commit()


def inventories_of(data: Evidence, mode: str, compared: list[str]) -> list[SourceInventory]:
    """Inventories of the window's events as declared by a source (honestly, or not)."""
    made: list[SourceInventory] = []
    for version in compared:
        window = VersionWindow(
            workflow_id="wf", workflow_version=version, start=W_START, end=W_END, end_inclusive=True
        )
        chosen = [e for e in data.executions if window.holds(e)]
        by_window: defaultdict[str, list[str]] = defaultdict(list)
        for item in chosen:
            if item.source_window_id is not None:
                by_window[item.source_window_id].append(item.event_id)
        listed = sorted({e.run_id for e in chosen if e.run_id is not None})
        if mode == "missing_run":
            listed.append("r-lost")
        made.append(
            SourceInventory(
                event_id=f"inv-{version}",
                workflow_id="wf",
                workflow_version=version,
                capture_start=W_START,
                capture_end=W_END,
                terminal_run_ids=tuple(listed),
                windows=tuple(
                    SourceWindow(
                        source_window_id=name,
                        expected_events=len(ids) + (mode == "fewer_events"),
                        event_ids_digest=ids_digest(ids),
                    )
                    for name, ids in sorted(by_window.items())
                ),
            )
        )
    return made


def multiset(entries: Iterable[Digested[Any]]) -> Counter[tuple[str, str]]:
    """Entries as a multiset of (event id, digest)."""
    return Counter((entry.item.event_id, entry.digest) for entry in entries)


def selected(unit_of_work: UnitOfWorkFactory, tenant: str, window: VersionWindow) -> Selection:
    """What the store selects for ``window``."""
    with unit_of_work() as tx:
        return tx.evidence.select(tenant, window, limit=1000)


_tenants = itertools.count()


def _compare(
    unit_of_work: UnitOfWorkFactory, tenant: str, data: Evidence, comparison: Comparison
) -> str:
    candidate, policy, mode = comparison
    # Decision ids are unique in the whole database, not per tenant.
    ecp = Ecp.build(
        unit_of_work, signer=None, clock=FixedClock(AS_OF), ids=SequentialIds(f"{tenant}-d")
    )
    body: dict[str, Any] = {
        "workflow_id": "wf",
        "baseline_version": "v1",
        "candidate_version": candidate,
        "start": W_START.isoformat(),
        "end": W_END.isoformat(),
        "policy": policy,
    }
    if mode != "none":
        made = inventories_of(data, mode, sorted({"v1", candidate}))
        ecp.evidence.ingest_inventories(tenant, made)
        body |= {"baseline_inventory_id": "inv-v1", "candidate_inventory_id": f"inv-{candidate}"}
    actor = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id=tenant)
    found, created = ecp.decisions.compare(actor, structure(body, CompareRequest))
    assert created
    event(f"inventories {mode}: {found.verdict.value} {', '.join(found.abstain_reasons)[:40]}")
    assert ecp.decisions.compare(actor, structure(body, CompareRequest)) == (found, False)
    return _comparable(found)


def _comparable(found: DecisionArtifact) -> str:
    """The artifact as JSON text without the fields a store's clock and ids decide."""
    wire = unstructure(found)
    for field in ("decision_id", "created_at", "as_of"):
        del wire[field]
    return json.dumps(wire, sort_keys=True)


def _scenario_answers(
    unit_of_work: UnitOfWorkFactory, bodies: list[dict[str, Any]]
) -> list[tuple[str, int, bool]]:
    """Each body compared over the scenario: (the artifact's JSON, its revision, created)."""
    ecp = build_scenario(unit_of_work)
    found = []
    for body in bodies:
        full = {
            "workflow_id": "w",
            "baseline_version": "v1",
            "candidate_version": "v2",
            "start": START.isoformat(),
            "end": END.isoformat(),
        } | body
        made, created = ecp.decisions.compare(ACTOR, structure(full, CompareRequest))
        found.append((_comparable(made), made.revision, created))
    return found


# --- a whole comparison is the same on both stores ---------------------------------------------

RUNS = 40
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")


def scenario_events() -> tuple[list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision]]:
    """Forty runs a version in two capture windows; one charge revised twice.

    v1 accepts half at 1.00 a run (run 0 at 1E-8, run 1 with a second charge), v2 accepts all
    at 0.80.
    """
    events: list[ExecutionEvent] = []
    assertions: list[OutcomeEvent] = []
    for version, price in (("v1", "1.00"), ("v2", "0.80")):
        for i in range(RUNS):
            run = f"{version}-r{i:03d}"
            cost = "1E-8" if (version, i) == ("v1", 0) else price
            events.append(
                ExecutionEvent(
                    event_id=f"{version}-e{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    occurred_at=START + timedelta(minutes=i, microseconds=i),
                    cost_usd=Decimal(cost),
                    cost_measurement=CostMeasurement.MEASURED,
                    charge_id=f"{version}-c{i:03d}",
                    source_window_id=f"{version}-sw{i % 2}",
                )
            )
            assertions.append(
                OutcomeEvent(
                    event_id=f"{version}-o{i:03d}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=run,
                    outcome_type="done",
                    asserted_at=START + timedelta(days=1),
                    value=version == "v2" or i % 2 == 0,
                )
            )
    events.append(
        ExecutionEvent(
            event_id="v1-e001b",
            workflow_id="w",
            workflow_version="v1",
            run_id="v1-r001",
            occurred_at=START,
            cost_usd=Decimal("0.2"),
            cost_measurement=CostMeasurement.MEASURED,
            charge_id="v1-c001b",
            source_window_id="v1-sw1",
        )
    )
    events.append(
        ExecutionEvent(  # at the request window's exclusive end
            event_id="v2-end",
            workflow_id="w",
            workflow_version="v2",
            run_id="v2-r999",
            occurred_at=END,
            cost_usd=Decimal(1),
            cost_measurement=CostMeasurement.MEASURED,
            charge_id="v2-end",
            source_window_id="v2-sw0",
        )
    )
    revised = [
        ChargeRevision(
            event_id=f"rev{n}",
            charge_id="v1-c002",
            revised_at=START + timedelta(days=2),
            cost_usd=Decimal(cost),
            cost_measurement=CostMeasurement.MEASURED,
        )
        for n, cost in ((1, "0.5"), (2, "123456789012345.123456789012345678"))
    ]
    return events, assertions, revised


def build_scenario(unit_of_work: UnitOfWorkFactory) -> Ecp:
    """An :class:`Ecp` over the store holding the scenario's evidence, definitions and inventories."""
    ecp = Ecp.build(
        unit_of_work, signer=None, clock=FixedClock(NOW + timedelta(days=1)), ids=SequentialIds("d")
    )
    events, assertions, revised = scenario_events()
    for version in ("v1", "v2"):
        ecp.evidence.define_outcome(
            ACTOR,
            structure(
                {
                    "workflow_id": "w",
                    "workflow_version": version,
                    "outcome_type": "done",
                    "predicate": {"kind": "equals", "value": True},
                },
                OutcomeDefinitionRequest,
            ),
        )
    ecp.evidence.ingest_executions("t", events)
    ecp.evidence.ingest_outcomes("t", assertions)
    ecp.evidence.ingest_revisions("t", revised)
    by_window: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for item in events:
        assert item.source_window_id is not None
        by_window[item.workflow_version, item.source_window_id].append(item.event_id)
    ecp.evidence.ingest_inventories(
        "t",
        [
            SourceInventory(
                event_id=f"inv-{version}",
                workflow_id="w",
                workflow_version=version,
                capture_start=START,
                capture_end=END,
                terminal_run_ids=tuple(
                    sorted({e.run_id for e in events if e.workflow_version == version and e.run_id})
                ),
                windows=tuple(
                    SourceWindow(
                        source_window_id=name,
                        expected_events=len(ids),
                        event_ids_digest=ids_digest(ids),
                    )
                    for (v, name), ids in sorted(by_window.items())
                    if v == version
                ),
            )
            for version in ("v1", "v2")
        ],
    )
    return ecp


class DecisionRepositoryConformance(StoreSuite):
    """Decision artifacts and schedules, and the source inventories comparisons read."""

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_an_artifact_is_found_by_its_request_and_evidence_and_read_back_exactly(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An artifact is found by its request and evidence and read back exactly."""
        kept = artifact(schedule_id="s-1")
        with uow() as tx:
            tx.decisions.add(kept, "sha256:evidence-1")
            tx.commit()
        with uow() as tx:
            found = tx.decisions.find("t1", "sha256:request-1", "sha256:evidence-1")
            assert found == kept
            assert exact(found) == exact(kept)
            assert repr(found.constraints[1].estimate) == "-0.0"
            assert found.constraints[2].interval == (5e-324, 1e300)
            assert [row.cost_usd for row in found.calculation_inputs.baseline] == [
                "1E-8",
                "1.5E+3",
                "0.000",
                "123456789012345.123456789012345678",
            ]
            assert found.policy.confidence_level == 1 - 2**-53
            (read,) = tx.decisions.page("t1", limit=10)
            assert exact(read) == exact(kept)
            # The same request over other evidence, other evidence of another request, another tenant.
            assert tx.decisions.find("t1", "sha256:request-1", "sha256:evidence-2") is None
            assert tx.decisions.find("t1", "sha256:request-2", "sha256:evidence-1") is None
            assert tx.decisions.find("t2", "sha256:request-1", "sha256:evidence-1") is None

    @pytest.mark.spec("§2.9 decision-artifact")
    def test_an_artifact_id_is_retained_once(self, uow: UnitOfWorkFactory) -> None:
        """An artifact id is retained once."""
        with uow() as tx:
            tx.decisions.add(artifact("d1"), "sha256:evidence-1")
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add(artifact("d1", request_digest="sha256:other"), "sha256:evidence-2")
        with uow() as tx:
            assert tx.decisions.find("t1", "sha256:other", "sha256:evidence-2") is None
            assert len(tx.decisions.page("t1", limit=10)) == 1

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_one_request_over_one_evidence_is_retained_once(self, uow: UnitOfWorkFactory) -> None:
        """One request over one evidence is retained once."""
        # Without this a concurrent identical comparison would retain a second artifact, and find()
        # could return either.
        with uow() as tx:
            tx.decisions.add(artifact("d1"), "sha256:evidence-1")
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add(artifact("d2"), "sha256:evidence-1")
        with uow() as tx:
            # Another tenant, or other evidence, is another artifact.
            tx.decisions.add(artifact("d3", tenant="t2"), "sha256:evidence-1")
            tx.decisions.add(artifact("d4"), "sha256:evidence-2")
            tx.commit()
        with uow() as tx:
            assert [a.decision_id for a in tx.decisions.page("t1", limit=10)] == ["d4", "d1"]

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_revisions_count_the_artifacts_of_one_compared_subject(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Revisions count the artifacts of one compared subject."""
        later = START + MICRO
        with uow() as tx:
            subjects: list[dict[str, Any]] = [
                {},
                {"request_digest": "sha256:request-2"},  # the subject: two artifacts
                {"start": later},
                {"end": END - MICRO},
                {"workflow_id": "wf2"},
                {"baseline": "v2", "candidate": "v1"},
                {"baseline": "v0"},
                {"candidate": "v3"},
                {"tenant": "t2"},
            ]
            for index, fields in enumerate(subjects):
                tx.decisions.add(artifact(f"d{index}", **fields), f"sha256:evidence-{index}")
            tx.commit()
        with uow() as tx:
            assert tx.decisions.revisions("t1", compare_request()) == 2
            # The policy is no part of the subject: a changed policy is the next revision.
            stricter = compare_request(policy=ComparisonPolicy(min_success_rate=0.9))
            assert tx.decisions.revisions("t1", stricter) == 2
            assert tx.decisions.revisions("t1", compare_request(start=later)) == 1
            assert (
                tx.decisions.revisions(
                    "t1", compare_request(baseline_version="v2", candidate_version="v1")
                )
                == 1
            )
            assert tx.decisions.revisions("t1", compare_request(candidate_version="v1")) == 0
            assert tx.decisions.revisions("t2", compare_request()) == 1
            assert tx.decisions.revisions("t3", compare_request()) == 0

    @pytest.mark.spec("§4.4 decision-history")
    def test_history_pages_newest_first_by_time_then_id(self, uow: UnitOfWorkFactory) -> None:
        """History pages newest first by time then id."""
        second = timedelta(seconds=1)
        # Four at one instant, ordered among themselves by id in code-point order ("1" < "B" < "a").
        made = [
            artifact("d-a"),
            artifact("d-B"),
            artifact("d-b"),
            artifact("d-1"),
            artifact("d-0", created_at=NOW + MICRO),
            artifact("d-z", created_at=NOW - second),
            artifact("d-w", created_at=NOW + second, workflow_id="wf2"),
            artifact("d-x", created_at=NOW + 2 * second, tenant="t2"),
        ]
        with uow() as tx:
            for index, item in enumerate(made):
                tx.decisions.add(attrs.evolve(item, request_digest=f"sha256:r{index}"), "sha256:e")
            tx.commit()
        with uow() as tx:
            newest = [a.decision_id for a in tx.decisions.page("t1", limit=100)]
            assert newest == ["d-w", "d-0", "d-b", "d-a", "d-B", "d-1", "d-z"]
            walked, before = [], None
            while True:
                page = tx.decisions.page("t1", limit=2, before=before)
                assert len(page) <= 2
                if not page:
                    break
                walked += [a.decision_id for a in page]
                before = (page[-1].created_at, page[-1].decision_id)
            assert walked == newest
            # The cursor is exclusive and works from the middle of one instant.
            assert [
                a.decision_id for a in tx.decisions.page("t1", limit=100, before=(NOW, "d-a"))
            ] == [
                "d-B",
                "d-1",
                "d-z",
            ]
            assert [
                a.decision_id for a in tx.decisions.page("t1", limit=100, workflow_id="wf")
            ] == [
                "d-0",
                "d-b",
                "d-a",
                "d-B",
                "d-1",
                "d-z",
            ]
            assert [
                a.decision_id
                for a in tx.decisions.page("t1", limit=2, workflow_id="wf", before=(NOW, "d-b"))
            ] == ["d-a", "d-B"]
            assert tx.decisions.page("t1", limit=10, workflow_id="other") == []
            assert [a.decision_id for a in tx.decisions.page("t2", limit=10)] == ["d-x"]
            assert tx.decisions.page("t3", limit=10) == []

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_schedules_are_stored_once_and_listed_per_tenant_oldest_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Schedules are stored once and listed per tenant oldest first."""
        made = [
            schedule("s-b"),
            schedule("s-B", name=None),
            schedule("s-a", created_at=NOW - MICRO),
            schedule("s-c", created_at=NOW + MICRO),
            schedule("s-x", tenant="t2"),
        ]
        with uow() as tx:
            for item in made:
                tx.decisions.add_schedule(item)
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add_schedule(schedule("s-b", tenant="t2"))
        with uow() as tx:
            listed = tx.decisions.schedules("t1")
            assert [s.schedule_id for s in listed] == ["s-a", "s-B", "s-b", "s-c"]
            assert listed[1:3] == [made[1], made[0]]
            assert exact(listed[2]) == exact(made[0])
            assert tx.decisions.schedules("t2") == [made[4]]
            assert tx.decisions.schedules("t3") == []

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_due_schedules_of_every_tenant_oldest_occurrence_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Due schedules of every tenant oldest occurrence first."""
        with uow() as tx:
            for item in [
                schedule("s-late", next_run_at=NOW + MICRO),
                schedule("s-b", next_run_at=NOW),
                schedule("s-B", next_run_at=NOW, tenant="t2"),
                schedule("s-early", next_run_at=NOW - timedelta(days=3)),
                schedule("s-a", next_run_at=NOW - MICRO, tenant="t3"),
            ]:
                tx.decisions.add_schedule(item)
            tx.commit()
        with uow() as tx:
            assert [s.schedule_id for s in tx.decisions.due(NOW, limit=10)] == [
                "s-early",
                "s-a",
                "s-B",
                "s-b",
            ]  # due at next_run_at itself; ties by id
            assert [s.schedule_id for s in tx.decisions.due(NOW, limit=2)] == ["s-early", "s-a"]
            assert [s.schedule_id for s in tx.decisions.due(NOW + MICRO, limit=10)][-1] == "s-late"
            assert tx.decisions.due(NOW - timedelta(days=4), limit=10) == []
            (early,) = tx.decisions.due(NOW - timedelta(days=1), limit=10)
            assert early == schedule("s-early", next_run_at=NOW - timedelta(days=3))

    @pytest.mark.spec("§9.1 schedule-claims")
    def test_a_claim_moves_the_next_run_only_from_the_value_read(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A claim moves the next run only from the value read."""
        first, other = schedule("s1"), schedule("s2")
        with uow() as tx:
            tx.decisions.add_schedule(first)
            tx.decisions.add_schedule(other)
            tx.commit()
        following = NOW + timedelta(days=1)
        with uow() as tx:
            # A stale expectation (one microsecond off, or an older occurrence) claims nothing.
            assert tx.decisions.claim("s1", NOW - MICRO, following) is False
            assert tx.decisions.claim("s1", NOW - timedelta(days=1), following) is False
            assert tx.decisions.claim("missing", NOW, following) is False
            tx.commit()
        assert stored(uow) == {"s1": first, "s2": other}
        with uow() as tx:  # a claim not committed is not kept
            assert tx.decisions.claim("s1", NOW, following) is True
        assert stored(uow)["s1"] == first
        with uow() as tx:
            assert tx.decisions.claim("s1", NOW, following) is True
            tx.commit()
        assert stored(uow) == {"s1": attrs.evolve(first, next_run_at=following), "s2": other}
        with uow() as tx:
            # The loser of a race held the old value: refused, and the winner's claim stands.
            assert tx.decisions.claim("s1", NOW, NOW + timedelta(days=7)) is False
            tx.commit()
        assert stored(uow)["s1"].next_run_at == following

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_a_run_is_recorded_on_its_schedule(self, uow: UnitOfWorkFactory) -> None:
        """A run is recorded on its schedule."""
        first, other = schedule("s1"), schedule("s2")
        with uow() as tx:
            tx.decisions.add_schedule(first)
            tx.decisions.add_schedule(other)
            tx.decisions.claim("s1", NOW, NOW + timedelta(days=1))
            tx.commit()
        ran_at = NOW + timedelta(seconds=5, microseconds=7)
        with uow() as tx:
            tx.decisions.record_run("s1", ran_at, "d-9", None)
            tx.decisions.record_run("missing", ran_at, "d-9", None)
            tx.commit()
        claimed = attrs.evolve(first, next_run_at=NOW + timedelta(days=1))
        assert stored(uow) == {
            "s1": attrs.evolve(claimed, last_run_at=ran_at, last_decision_id="d-9"),
            "s2": other,
        }
        with uow() as tx:  # a failed occurrence replaces the last result
            tx.decisions.record_run("s1", ran_at + MICRO, None, "unknown source inventory é")
            tx.commit()
        assert stored(uow)["s1"] == attrs.evolve(
            claimed,
            last_run_at=ran_at + MICRO,
            last_decision_id=None,
            last_error="unknown source inventory é",
        )

    @pytest.mark.spec("§4.4 source-inventory")
    def test_a_source_inventory_is_read_back_with_its_digest(self, uow: UnitOfWorkFactory) -> None:
        """A source inventory is read back with its digest."""
        full = SourceInventory(
            event_id="inv-1",
            workflow_id="wf",
            workflow_version="v1",
            capture_start=NOW - timedelta(days=1),
            capture_end=NOW + MICRO,
            terminal_run_ids=("r2", "r10", "r1", "é"),
            windows=(
                SourceWindow(
                    source_window_id="w2", expected_events=0, event_ids_digest=ids_digest([])
                ),
                SourceWindow(
                    source_window_id="w1",
                    expected_events=10_000_000,
                    event_ids_digest="sha256:" + "0" * 64,
                ),
            ),
        )
        empty = attrs.evolve(full, event_id="inv-2", terminal_run_ids=(), windows=())
        with uow() as tx:
            tx.evidence.add_inventories("t1", [digested(full), digested(empty)])
            tx.evidence.add_inventories("t2", [digested(attrs.evolve(full, workflow_version="v9"))])
            tx.commit()
        with uow() as tx:
            assert tx.evidence.inventory("t1", "inv-1") == digested(full)
            assert tx.evidence.inventory("t1", "inv-2") == digested(empty)
            assert tx.evidence.inventory("t2", "inv-1").item.workflow_version == "v9"
            assert tx.evidence.inventory("t2", "inv-2") is None
            assert tx.evidence.inventory("t1", "inv-3") is None


class DecisionsMatchReference(ExampleStoreSuite):
    """The adapter's evidence selection and whole comparisons equal the in-memory reference."""

    @settings(
        max_examples=200 if THOROUGH else 25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=evidence(), comparison=comparisons())
    def test_the_selection_and_artifact_equal_the_reference(
        self, open_store: StoreOpener, data: Evidence, comparison: Comparison
    ) -> None:
        """The evidence selected for a window, and the artifact compared from it, equal the reference's."""
        # Each example is a new tenant of one database; the earlier examples' tenants hold evidence
        # with the same ids in the same window, which must never be selected. The pool is opened
        # here, not in a fixture: its background connects use ``random`` (see the evidence contract).
        tenant = f"tenant-{next(_tenants)}"
        with open_store() as uow:
            stores = [MemoryStore().unit_of_work, uow]
            for unit_of_work in stores:
                load(unit_of_work, tenant, data)
            for version, end_inclusive in itertools.product(("v1", "v2", "V1"), (False, True)):
                window = VersionWindow(
                    workflow_id="wf",
                    workflow_version=version,
                    start=W_START,
                    end=W_END,
                    end_inclusive=end_inclusive,
                )
                reference, actual = (
                    selected(unit_of_work, tenant, window) for unit_of_work in stores
                )
                assert multiset(actual.executions) == multiset(reference.executions)
                assert multiset(actual.outcomes) == multiset(reference.outcomes)
                assert multiset(actual.revisions) == multiset(reference.revisions)
                assert actual.definition == reference.definition
                # The rows read back price and judge each run as the reference does.
                assert economics(actual, AS_OF) == economics(reference, AS_OF)
                event(
                    f"{version} inclusive={end_inclusive} selects an event at the end: "
                    f"{any(e.item.occurred_at == W_END for e in actual.executions)}"
                )
            # A limit caps the executions read (the service asks for one more than it accepts).
            everything = selected(stores[1], tenant, window)
            with uow() as tx:
                capped = tx.evidence.select(tenant, window, limit=2)
            assert len(capped.executions) == min(2, len(everything.executions))
            artifacts = [
                _compare(unit_of_work, tenant, data, comparison) for unit_of_work in stores
            ]
            assert artifacts[1] == artifacts[0]

    def test_a_whole_comparison_is_the_same_on_both_stores(self, open_store: StoreOpener) -> None:
        """A whole comparison is the same on both stores."""
        bodies: list[dict[str, Any]] = [
            {"policy": {"min_success_rate": 0.5}},
            {"policy": {"min_success_rate": 0.5, "confidence_level": 0.99}},
            {
                "policy": {"min_success_rate": 0.5},
                "baseline_inventory_id": "inv-v1",
                "candidate_inventory_id": "inv-v2",
            },
            {"policy": {"min_success_rate": 0.5}, "baseline_inventory_id": "inv-v1"},
            {"policy": {"min_success_rate": 0.5}, "candidate_version": "v1"},
            {"policy": {"min_success_rate": 0.5}},  # the first again: the retained artifact
        ]
        answers: list[list[tuple[str, int, bool]]] = []
        with open_store() as uow:
            answers.extend(
                _scenario_answers(unit_of_work, bodies)
                for unit_of_work in (MemoryStore().unit_of_work, uow)
            )
        memory, adapter = answers
        assert adapter == memory
        # The scenario is not trivial: a pass, revisions, both inventory paths, an exact cost.
        first = json.loads(memory[0][0])
        assert first["verdict"] == "pass"
        assert [revision for _, revision, _ in memory] == [1, 2, 3, 4, 1, 1]
        assert [created for *_, created in memory] == [True] * 5 + [False]
        inventoried = json.loads(memory[2][0])
        # The request window excludes its end, an inventory's capture interval includes it.
        assert first["source_delivery"]["candidate"]["runs"] == RUNS
        assert inventoried["source_delivery"]["candidate"]["runs"] == RUNS + 1
        assert inventoried["verdict"] == "pass"
        assert json.loads(memory[3][0])["abstain_reasons"] == ["source_inventory_one_sided"]
        rows = {row["cost_usd"] for row in first["calculation_inputs"]["baseline"]}
        assert rows == {"0.00000001", "1.00", "1.20", "123456789012345.123456789012345678"}
