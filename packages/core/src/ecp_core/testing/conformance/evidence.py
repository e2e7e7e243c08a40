"""Evidence repository: idempotent ingestion, charge ownership, definitions, erasure, the tally.

The reference property proves an adapter's aggregation (in PostgreSQL, one SQL statement)
equals the reference in :mod:`ecp_core.debugger.tally` (what the memory adapter runs) on random
evidence, and the provider events of reconciliation equal :mod:`ecp_core.reconciliation.matching`'s.
"""

import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.debugger.tally import Granularity, Grouping, Tally, TallyQuery, scalar_key
from ecp_core.errors import Conflict
from ecp_core.evidence.model import (
    ChargeRevision,
    CostMeasurement,
    CostRole,
    ExecutionEvent,
    OutcomeDefinition,
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
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import amounts, costs, digested, revised_costs
from ecp_core.testing.strategies.evidence import predicates as evidence_predicates
from ecp_core.testing.strategies.text import text

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
DAY = timedelta(days=1)


def execution(event_id: str = "e1", **fields: Any) -> ExecutionEvent:
    """An execution event of run r1 (a measured charge of 0.25); ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": "v1",
        "occurred_at": NOW,
        "run_id": "r1",
        "charge_id": f"c-{event_id}",
        "cost_usd": Decimal("0.25"),
        "cost_measurement": CostMeasurement.MEASURED,
    } | fields
    return ExecutionEvent(event_id=event_id, **values)


def outcome(event_id: str = "o1", **fields: Any) -> OutcomeEvent:
    """An outcome of run r1 asserted at :data:`NOW`; ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": "v1",
        "run_id": "r1",
        "outcome_type": "done",
        "asserted_at": NOW,
    } | fields
    return OutcomeEvent(event_id=event_id, **values)


def revision(
    event_id: str = "rev1", charge_id: str = "c-e1", cost: str | None = "0.5", offset: int = 0
) -> ChargeRevision:
    """A revision of a charge's cost (unmeasured when ``cost`` is None)."""
    return ChargeRevision(
        event_id=event_id,
        charge_id=charge_id,
        revised_at=NOW + timedelta(seconds=offset),
        cost_usd=None if cost is None else Decimal(cost),
        cost_measurement=CostMeasurement.UNMEASURED if cost is None else CostMeasurement.MEASURED,
    )


def inventory(event_id: str = "inv1", expected: int = 3) -> SourceInventory:
    """A source inventory of one capture window expecting ``expected`` events."""
    return SourceInventory(
        event_id=event_id,
        workflow_id="wf",
        workflow_version="v1",
        capture_start=NOW,
        capture_end=NOW + DAY,
        terminal_run_ids=("r1", "r2"),
        windows=(
            SourceWindow(
                source_window_id="w1",
                expected_events=expected,
                event_ids_digest="sha256:" + "0" * 64,
            ),
        ),
    )


def definition(
    tenant: str = "t1",
    version: str = "v1",
    outcome_type: str = "done",
    predicate: SuccessPredicate | None = None,
    offset: int = 0,
) -> OutcomeDefinition:
    """An outcome definition of workflow wf (by default: success when the value is true)."""
    predicate = predicate or SuccessPredicate(kind=PredicateKind.EQUALS, value=True)
    return OutcomeDefinition(
        tenant_id=tenant,
        workflow_id="wf",
        workflow_version=version,
        outcome_type=outcome_type,
        predicate=predicate,
        digest=digest_of(predicate),
        created_at=NOW + timedelta(seconds=offset),
        created_by="key-1",
    )


def query(**fields: Any) -> TallyQuery:
    """A tally query over wf from a day before :data:`NOW` to a day after; ``fields`` change it."""
    values: dict[str, Any] = {
        "workflow_id": "wf",
        "workflow_version": None,
        "start": NOW - DAY,
        "end": NOW + DAY,
        "as_of": NOW + DAY,
        "groupings": frozenset(Grouping),
    } | fields
    return TallyQuery(**values)


def by_key(tallies: Iterable[Tally]) -> dict[Any, tuple[Any, ...]]:
    """Tallies keyed by group identity, with every count and sum (Decimals compare by value)."""
    listed = list(tallies)
    keyed = {tally.key(): attrs.astuple(tally)[5:] for tally in listed}
    assert len(keyed) == len(listed), "two rows of one group"
    return keyed


# --- ingestion --------------------------------------------------------------------------------


# --- definitions -------------------------------------------------------------------------------


# --- counting and erasure ---------------------------------------------------------------------


# --- the tally: worked examples ----------------------------------------------------------------


# --- the tally: the adapter equals the reference ---------------------------------------------

text_values = text(max_size=3)
common_scalars = st.sampled_from([True, False, 1, 1.0, 0, 0.0, -0.0, 0.5, "1", "a", "true"])
scalars = st.one_of(
    common_scalars,
    common_scalars,
    st.sampled_from([2.5, 1e20, 1e300, 1.5e300, -1, 3, "b", "B", "é", ""]),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    text_values,
)
money = amounts(mantissas=(0, 10**12), exponents=(-18, 0))
versions = st.sampled_from(["v1", "v1", "v2", "v2", "V10"])
moments = st.builds(
    lambda hours, seconds: (
        NOW.replace(minute=0, second=0, microsecond=0) + timedelta(hours=hours, seconds=seconds)
    ),
    st.integers(-30, 30),
    st.sampled_from([0, 0, 1, 1799, 3599]),
)
ids = st.sampled_from(["a", "b", "B", "a1", "é", "Z", "10", "9"])
OUTCOME_IDS = 8


metadata = st.fixed_dictionaries(
    {},
    optional={
        "provider": st.sampled_from(["openai", "openai", "anthropic", 1]),
        "model": st.sampled_from(["gpt", "claude", 2.5]),
        "project_id": st.sampled_from(["p1", "p2", 3]),
        "region": st.just("eu"),
        "other": scalars,
    },
)


@st.composite
def executions(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an execution event but its id."""
    version = draw(versions)
    cost = draw(costs(money, summary_odds=6))
    dimensions = draw(st.dictionaries(st.sampled_from(["k", "other"]), scalars, max_size=2))
    return {
        "workflow_id": draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
        "workflow_version": version,
        "occurred_at": draw(moments),
        # Run ids may repeat across versions: a run is a (version, run id) pair.
        "run_id": draw(st.one_of(st.none(), st.integers(1, 2).map(lambda n: f"r{n}"))),
        "step_id": draw(st.one_of(st.none(), ids)),
        "attempt": draw(st.sampled_from([1, 1, 2, 3])),
        "subject_id": draw(st.one_of(st.none(), st.sampled_from(["s1", "s2", "S1"]))),
        "dimensions": dimensions,
        "cost_usd": cost.cost_usd,
        "cost_measurement": cost.measurement,
        "cost_role": cost.role,
        "charge_id": None if cost.summary else "charge",
        "metadata": draw(metadata),
    }


@st.composite
def outcomes(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an outcome event but its id."""
    version = draw(versions)
    return {
        "workflow_id": draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
        "workflow_version": version,
        "run_id": f"r{draw(st.integers(1, 2))}",
        "outcome_type": draw(st.sampled_from(["done", "done", "done", "score"])),
        "asserted_at": draw(moments),
        "value": draw(st.one_of(st.just(True), common_scalars, scalars)),
        "outcome_measurement": draw(st.sampled_from(OutcomeMeasurement)),
        "maturity": draw(st.sampled_from(OutcomeMaturity)),
    }


@st.composite
def revisions(draw: st.DrawFn, charges: list[str]) -> dict[str, Any]:
    """The fields of a revision of one of ``charges`` (or of an unknown one) but its id."""
    cost, measurement = draw(revised_costs(money))
    return {
        "charge_id": draw(st.sampled_from([*charges, "unknown-charge"])),
        "revised_at": draw(moments),
        "cost_usd": cost,
        "cost_measurement": measurement,
    }


predicates = evidence_predicates(
    st.one_of(st.just(True), common_scalars, scalars),
    st.one_of(
        st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(1), Decimal(-1)]),
        st.decimals(
            allow_nan=False, allow_infinity=False, places=3, max_value=10**6, min_value=-(10**6)
        ),
    ),
)


@st.composite
def evidence(
    draw: st.DrawFn,
) -> tuple[list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision], list[OutcomeDefinition]]:
    """A tenant's evidence with unique event ids (ids drawn to make tie-breaks matter)."""
    rows = draw(st.lists(executions(), min_size=4, max_size=25))
    events: list[ExecutionEvent] = []
    for index, fields in enumerate(rows):
        event_id = f"e{index:02d}"
        if fields["charge_id"] is not None:
            fields["charge_id"] = f"c{index}"
        events.append(ExecutionEvent(event_id=event_id, **fields))
    charges = [e.charge_id for e in events if e.charge_id is not None] or ["c0"]
    outcome_ids = draw(st.lists(ids, unique=True, min_size=2, max_size=OUTCOME_IDS))
    asserted = [OutcomeEvent(event_id=f"o{i}", **draw(outcomes())) for i in outcome_ids]
    revision_ids = draw(st.lists(ids, unique=True, max_size=6))
    revised = [ChargeRevision(event_id=f"r{i}", **draw(revisions(charges))) for i in revision_ids]
    definitions = [
        OutcomeDefinition(
            tenant_id="?",
            workflow_id=draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
            workflow_version=version,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            predicate=(predicate := draw(predicates)),
            digest=digest_of(predicate),
            created_at=NOW,
            created_by="key-1",
        )
        for version in ("v1", "v2", "V10")
        if draw(st.integers(0, 3)) > 0
    ]
    return events, asserted, revised, definitions


tally_windows = st.builds(
    lambda start, hours, as_of, version: {
        "start": start,
        "end": start + timedelta(hours=hours),
        "as_of": as_of,
        "workflow_version": version,
    },
    moments.filter(lambda moment: moment <= NOW),
    st.integers(0, 72),
    st.one_of(moments, st.just(NOW + 2 * DAY)),
    st.one_of(st.none(), st.none(), versions),
)

_tenants = itertools.count()


def _compare(
    stores: list[UnitOfWorkFactory],
    tenant: str,
    window: dict[str, Any],
    subset: set[Grouping],
) -> None:
    """The adapter (second of ``stores``) answers as the reference (first) does."""
    reconciled = ProviderWindow(
        provider="openai", start=window["start"], end=window["end"], as_of=window["as_of"]
    )
    reference, actual = (
        _provider_events(unit_of_work, tenant, reconciled) for unit_of_work in stores
    )
    assert actual == reference
    for groupings in (frozenset(Grouping), frozenset(subset)):
        for granularity in Granularity:
            for dimension in (None, "k", "missing"):
                asked = query(
                    **window, groupings=groupings, granularity=granularity, dimension=dimension
                )
                expected, tallied = (
                    by_key(_tally(unit_of_work, tenant, asked)) for unit_of_work in stores
                )
                assert tallied == expected, asked


def _provider_events(
    unit_of_work: UnitOfWorkFactory, tenant: str, window: ProviderWindow
) -> Counter[tuple[Any, ...]]:
    with unit_of_work() as tx:
        events = tx.evidence.provider_events(tenant, window, limit=10_000)
    return Counter(
        (
            e.workflow_id,
            e.workflow_version,
            e.occurred_at,
            e.model,
            tuple(sorted(e.scope.items())),
            e.cost_usd,
            e.cost_measurement,
            e.outcome_status,
        )
        for e in events
    )


def _tally(unit_of_work: UnitOfWorkFactory, tenant: str, asked: TallyQuery) -> list[Tally]:
    with unit_of_work() as tx:
        return tx.evidence.tally(tenant, asked)


class EvidenceRepositoryConformance(StoreSuite):
    """Evidence: idempotent ingestion, charge ownership, definitions, erasure, the tally."""

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_new_events_are_stored_and_exact_replays_counted(self, uow: UnitOfWorkFactory) -> None:
        """New events are stored and exact replays counted."""
        first = [digested(execution("e1")), digested(execution("e2", run_id=None))]
        with uow() as tx:
            assert tx.evidence.add_executions("t1", first) == 0
            tx.commit()
        again = [*first, digested(execution("e3")), first[0]]
        with uow() as tx:
            assert tx.evidence.add_executions("t1", again) == 3
            assert tx.evidence.add_executions("t1", []) == 0
            tx.commit()
        with uow() as tx:
            assert tx.evidence.count_executions("t1", query(), limit=100) == 3
            # Another tenant's identical ids are its own.
            assert tx.evidence.add_executions("t2", first) == 0
            assert tx.evidence.count_executions("t2", query(), limit=100) == 2

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_replays_inside_one_batch_count(self, uow: UnitOfWorkFactory) -> None:
        """Replays inside one batch count."""
        event = digested(outcome("o1"))
        with uow() as tx:
            assert tx.evidence.add_outcomes("t1", [event, event, event]) == 2
            assert tx.evidence.add_outcomes("t1", [event]) == 1

    @pytest.mark.spec("C6 evidence-ingestion")
    @pytest.mark.parametrize(
        ("add", "make"),
        [
            ("add_executions", lambda i, **f: execution(i, attempt=f.get("n", 1))),
            ("add_outcomes", lambda i, **f: outcome(i, value=f.get("n", 1))),
            ("add_revisions", lambda i, **f: revision(i, cost=str(f.get("n", 1)))),
            ("add_inventories", lambda i, **f: inventory(i, expected=f.get("n", 1))),
        ],
    )
    def test_a_changed_replay_conflicts_and_keeps_nothing_of_the_batch(
        self, uow: UnitOfWorkFactory, add: str, make: Callable[..., Any]
    ) -> None:
        """A changed replay conflicts and keeps nothing of the batch."""
        with uow() as tx:
            assert getattr(tx.evidence, add)("t1", [digested(make("a"))]) == 0
            tx.commit()
        with uow() as tx, pytest.raises(Conflict, match="a was stored with other content"):
            getattr(tx.evidence, add)(
                "t1", [digested(make("b")), digested(make("a", n=2)), digested(make("c"))]
            )
        with uow() as tx:
            # Nothing of the refused batch was kept: b and c are new again, a is unchanged.
            assert (
                getattr(tx.evidence, add)(
                    "t1", [digested(make("b")), digested(make("c")), digested(make("a"))]
                )
                == 1
            )

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_one_id_with_two_contents_in_one_batch_conflicts(self, uow: UnitOfWorkFactory) -> None:
        """One id with two contents in one batch conflicts."""
        with uow() as tx, pytest.raises(Conflict, match="o1 was stored with other content"):
            tx.evidence.add_outcomes(
                "t1", [digested(outcome("o1")), digested(outcome("o1", value=2))]
            )
        with uow() as tx:
            assert tx.evidence.add_outcomes("t1", [digested(outcome("o1"))]) == 0

    @pytest.mark.spec("§2.9 charge-ownership")
    def test_a_charge_belongs_to_one_event(self, uow: UnitOfWorkFactory) -> None:
        """A charge belongs to one event."""
        with uow() as tx:
            tx.evidence.add_executions("t1", [digested(execution("e1", charge_id="c"))])
            tx.commit()
        with uow() as tx, pytest.raises(Conflict, match="charge c belongs to event e1"):
            tx.evidence.add_executions(
                "t1", [digested(execution("e0")), digested(execution("e2", charge_id="c"))]
            )
        with uow() as tx, pytest.raises(Conflict, match="charge d belongs to event"):
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e3", charge_id="d")),
                    digested(execution("e4", charge_id="d")),
                ],
            )
        with uow() as tx:
            # The owner's own replay is fine; another tenant has its own charge ids.
            assert tx.evidence.add_executions("t1", [digested(execution("e1", charge_id="c"))]) == 1
            assert tx.evidence.add_executions("t2", [digested(execution("e2", charge_id="c"))]) == 0
            assert tx.evidence.count_executions("t1", query(), limit=10) == 1

    @pytest.mark.spec("§2.9 charge-ownership")
    def test_erasing_an_owner_frees_its_charge(self, uow: UnitOfWorkFactory) -> None:
        """Erasing an owner frees its charge."""
        with uow() as tx:
            tx.evidence.add_executions(
                "t1", [digested(execution("e1", charge_id="c", run_id="r1"))]
            )
            assert tx.evidence.erase_run("t1", "r1", []) == 1
            assert tx.evidence.add_executions("t1", [digested(execution("e2", charge_id="c"))]) == 0

    @pytest.mark.spec("§2.9 outcome-definition")
    @pytest.mark.parametrize(
        "predicate",
        [
            SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            SuccessPredicate(kind=PredicateKind.EQUALS, value=1e300),
            SuccessPredicate(kind=PredicateKind.EQUALS, value=1.0),
            SuccessPredicate(kind=PredicateKind.EQUALS, value="passé"),
            SuccessPredicate(
                kind=PredicateKind.AT_LEAST, threshold=Decimal("0.123456789012345678901")
            ),
            SuccessPredicate(kind=PredicateKind.LESS_THAN, threshold=Decimal("-1E+3")),
        ],
    )
    def test_definitions_are_stored_once(
        self, uow: UnitOfWorkFactory, predicate: SuccessPredicate
    ) -> None:
        """Definitions are stored once."""
        stored = definition(predicate=predicate)
        with uow() as tx:
            assert tx.evidence.definition("t1", "wf", "v1") is None
            tx.evidence.add_definition(stored)
            tx.commit()
        with uow() as tx:
            found = tx.evidence.definition("t1", "wf", "v1")
            assert found == stored
            assert type(found.predicate.value) is type(stored.predicate.value)
            assert tx.evidence.definition("t2", "wf", "v1") is None
            assert tx.evidence.definition("t1", "wf", "v2") is None
            assert tx.evidence.definition("t1", "other", "v1") is None
            with pytest.raises(Conflict):
                tx.evidence.add_definition(definition(outcome_type="other", offset=5))
            tx.evidence.add_definition(definition(tenant="t2"))
            tx.evidence.add_definition(definition(version="v2"))

    @pytest.mark.spec("§7 debugger-event-limit")
    def test_count_executions_stops_at_the_limit(self, uow: UnitOfWorkFactory) -> None:
        """Counting executions stops at the limit and counts the half-open window."""
        events = [
            digested(execution(f"e{i}", occurred_at=NOW + timedelta(minutes=i))) for i in range(10)
        ]
        events.append(digested(execution("other-wf", workflow_id="wf2")))
        events.append(digested(execution("v2", workflow_version="v2")))
        with uow() as tx:
            tx.evidence.add_executions("t1", events)
            assert tx.evidence.count_executions("t1", query(), limit=100) == 11
            assert tx.evidence.count_executions("t1", query(), limit=4) == 4
            assert tx.evidence.count_executions("t1", query(workflow_version="v1"), limit=100) == 10
            assert tx.evidence.count_executions("t1", query(workflow_version="v2"), limit=100) == 1
            # The window is half open: start counts, end does not.
            window = query(start=NOW + timedelta(minutes=2), end=NOW + timedelta(minutes=5))
            assert tx.evidence.count_executions("t1", window, limit=100) == 3
            assert tx.evidence.count_executions("t2", query(), limit=100) == 0

    @pytest.mark.spec("§9.1 econ-erasure-join-key")
    def test_erase_run_deletes_executions_and_outcomes_of_the_run_or_join_keys(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Erase run deletes executions and outcomes of the run or join keys."""
        with uow() as tx:
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", run_id="r1")),
                    digested(execution("e2", run_id="r2", join_key="k1")),
                    digested(execution("e3", run_id=None, join_key="k2")),
                    digested(execution("e4", run_id="r3")),
                ],
            )
            tx.evidence.add_executions("t2", [digested(execution("e1", run_id="r1"))])
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", run_id="r1")),
                    digested(outcome("o2", run_id="r4", join_key="k2")),
                    digested(outcome("o3", run_id="r3")),
                ],
            )
            tx.evidence.add_revisions("t1", [digested(revision("rev1", charge_id="c-e1"))])
            tx.commit()
        with uow() as tx:
            assert tx.evidence.erase_run("t1", "r1", ["k1", "k2"]) == 5
            tx.commit()
        with uow() as tx:
            assert tx.evidence.erase_run("t1", "r1", ["k1", "k2"]) == 0
            assert tx.evidence.count_executions("t1", query(), limit=100) == 1
            assert tx.evidence.count_executions("t2", query(), limit=100) == 1
            assert tx.evidence.erase_run("t1", "nothing", []) == 0
            # Outcome o3 (run r3) survived: it still decides r3.
            tx.evidence.add_definition(definition())
            (total,) = tx.evidence.tally("t1", query(groupings=frozenset({Grouping.TOTAL})))
            assert (total.events, total.runs, total.successful_runs) == (1, 1, 1)

    def test_provider_events_are_priced_and_judged_charges_of_the_provider(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Provider events are priced and judged charges of the provider."""
        openai = {"provider": "openai", "model": "gpt", "project_id": "p1", "seed": 3}
        with uow() as tx:
            tx.evidence.add_definition(definition())
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", metadata=openai)),
                    digested(execution("e2", run_id="r2", metadata=openai, cost_usd=Decimal(2))),
                    digested(execution("e3", run_id=None, metadata=openai, workflow_id="wf2")),
                    digested(execution("e4", metadata={"provider": "anthropic"})),
                    digested(execution("e5", metadata={"provider": 1})),
                    digested(execution("e6", metadata=openai, occurred_at=NOW + DAY)),
                    digested(
                        execution(
                            "e7",
                            metadata=openai,
                            charge_id=None,
                            cost_usd=None,
                            cost_role=CostRole.SUMMARY,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                ],
            )
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", value=True)),
                    digested(outcome("o2", run_id="r2", value=False)),
                ],
            )
            tx.evidence.add_revisions(
                "t1", [digested(revision("rev1", charge_id="c-e1", cost="0.75"))]
            )
            window = ProviderWindow(provider="openai", start=NOW, end=NOW + DAY, as_of=NOW + DAY)
            events = tx.evidence.provider_events("t1", window, limit=10)
            assert sorted((e.cost_usd, e.outcome_status.value, e.workflow_id) for e in events) == [
                (Decimal("0.25"), "unresolved", "wf2"),
                (Decimal("0.75"), "success", "wf"),
                (Decimal(2), "failure", "wf"),
            ]
            assert {(e.model, tuple(e.scope.items())) for e in events} == {
                ("gpt", (("project_id", "p1"),))
            }
            assert len(tx.evidence.provider_events("t1", window, limit=2)) == 2
            assert tx.evidence.provider_events("t2", window, limit=10) == []

    def test_the_tally_of_a_worked_example(self, uow: UnitOfWorkFactory) -> None:
        """The tally of a worked example: totals, cohorts and windows as computed by hand."""
        later = NOW + timedelta(hours=2)
        with uow() as tx:
            tx.evidence.add_definition(definition())
            tx.evidence.add_definition(
                definition(
                    version="v2",
                    outcome_type="score",
                    predicate=SuccessPredicate(
                        kind=PredicateKind.AT_LEAST, threshold=Decimal("0.5")
                    ),
                )
            )
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", run_id="r1", step_id="a", subject_id="s1")),
                    digested(
                        execution("e2", run_id="r1", step_id="b", attempt=2, occurred_at=later)
                    ),
                    digested(
                        execution(
                            "e3",
                            run_id="r2",
                            cost_usd=Decimal("1.5"),
                            cost_measurement=CostMeasurement.ESTIMATED,
                        )
                    ),
                    digested(
                        execution(
                            "e4",
                            run_id="r2",
                            cost_usd=None,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                    digested(
                        execution(
                            "e5",
                            run_id=None,
                            charge_id=None,
                            cost_usd=None,
                            cost_role=CostRole.SUMMARY,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                    digested(
                        execution(
                            "e6", workflow_version="v2", run_id="r3", dimensions={"tier": 1.0}
                        )
                    ),
                    digested(
                        execution("e7", workflow_version="v2", run_id="r4", dimensions={"tier": 1})
                    ),
                    digested(
                        execution(
                            "e8", workflow_version="v2", run_id="r5", dimensions={"tier": True}
                        )
                    ),
                ],
            )
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", run_id="r1", value=True)),
                    # r2: a later failure decides; a still later, future success does not count.
                    digested(outcome("o2", run_id="r2", value=True)),
                    digested(
                        outcome(
                            "o3",
                            run_id="r2",
                            value=False,
                            asserted_at=later,
                            maturity=OutcomeMaturity.PROVISIONAL,
                        )
                    ),
                    digested(outcome("o4", run_id="r2", value=True, asserted_at=NOW + 2 * DAY)),
                    # v2 by score: 0.5 passes, a string cannot be judged, ties go to the greater id.
                    digested(
                        outcome(
                            "o5",
                            workflow_version="v2",
                            run_id="r3",
                            outcome_type="score",
                            value=0.5,
                            outcome_measurement=OutcomeMeasurement.INFERRED,
                        )
                    ),
                    digested(
                        outcome(
                            "o6",
                            workflow_version="v2",
                            run_id="r4",
                            outcome_type="score",
                            value="high",
                        )
                    ),
                    digested(
                        outcome(
                            "O7",
                            workflow_version="v2",
                            run_id="r5",
                            outcome_type="score",
                            value=0.9,
                        )
                    ),
                    digested(
                        outcome(
                            "o7",
                            workflow_version="v2",
                            run_id="r5",
                            outcome_type="score",
                            value=0.1,
                        )
                    ),
                ],
            )
            tx.evidence.add_revisions(
                "t1",
                [
                    digested(revision("rev1", charge_id="c-e1", cost="0.75", offset=10)),
                    digested(revision("rev2", charge_id="c-e1", cost="0.30", offset=5)),
                    digested(revision("rev3", charge_id="c-e3", cost=None)),
                ],
            )
            expected = {
                Grouping.TOTAL: Tally(
                    grouping=Grouping.TOTAL,
                    events=8,
                    summary_events=1,
                    unattributed_events=1,
                    runs=5,
                    successful_runs=2,
                    failed_runs=2,
                    unresolved_runs=1,
                    inferred_outcome_runs=1,
                    provisional_outcome_runs=1,
                    measured_usd=Decimal("1.75"),
                    estimated_usd=Decimal(0),
                    unknown_cost_events=2,
                    failure_tax_usd=Decimal("0.25"),
                    repeated_attempt_events=1,
                    repeated_attempt_usd=Decimal("0.25"),
                ),
            }
            tallies = tx.evidence.tally("t1", query())
            assert by_key([t for t in tallies if t.grouping is Grouping.TOTAL]) == by_key(
                expected.values()
            )
            cohorts = {
                t.key(): (t.cohort, t.events, t.successful_runs, t.failed_runs, t.unresolved_runs)
                for t in tx.evidence.tally(
                    "t1", query(groupings=frozenset({Grouping.VERSION_COHORT}), dimension="tier")
                )
            }
            assert sorted(cohorts.values(), key=lambda v: scalar_key(v[0])) == [
                (None, 5, 1, 1, 0),
                (True, 1, 0, 1, 0),
                (1, 2, 1, 0, 1),
            ]
            assert all(type(v[0]) is not float for v in cohorts.values())
            windows = tx.evidence.tally(
                "t1",
                query(
                    workflow_version="v1",
                    granularity=Granularity.HOUR,
                    groupings=frozenset({Grouping.VERSION_WINDOW}),
                ),
            )
            assert sorted((t.window_start, t.events) for t in windows) == [
                (datetime(2026, 11, 22, 5, tzinfo=UTC), 4),
                (datetime(2026, 11, 22, 7, tzinfo=UTC), 1),
            ]
            assert tx.evidence.tally("t1", query(groupings=frozenset())) == []
            assert tx.evidence.tally("t2", query()) == []
            assert tx.evidence.tally("t1", query(workflow_id="nothing")) == []


class EvidenceMatchesReference(ExampleStoreSuite):
    """The adapter's evidence reads equal the in-memory reference on random evidence."""

    @settings(
        max_examples=300 if THOROUGH else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=evidence(), window=tally_windows, subset=st.sets(st.sampled_from(Grouping)))
    def test_the_tally_and_provider_events_equal_the_reference(
        self,
        open_store: StoreOpener,
        data: tuple[
            list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision], list[OutcomeDefinition]
        ],
        window: dict[str, Any],
        subset: set[Grouping],
    ) -> None:
        """The tally (every grouping and mode) and the provider events equal the reference's."""
        # Each example is a new tenant of the one store (tenants never see each other's data).
        tenant = f"tenant-{next(_tenants)}"
        events, asserted, revised, definitions = data
        with open_store() as uow:
            stores = [MemoryStore().unit_of_work, uow]
            for unit_of_work in stores:
                with unit_of_work() as tx:
                    tx.evidence.add_executions(tenant, [digested(e) for e in events])
                    tx.evidence.add_outcomes(tenant, [digested(o) for o in asserted])
                    tx.evidence.add_revisions(tenant, [digested(r) for r in revised])
                    for item in definitions:
                        tx.evidence.add_definition(attrs.evolve(item, tenant_id=tenant))
                    tx.commit()
            _compare(stores, tenant, window, subset)
