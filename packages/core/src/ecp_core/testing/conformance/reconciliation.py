"""Provider-bill reconciliation on every store: statements, provider events, whole reports.

The statements repository is checked on every store alike (exact round trip, one
statement per identity, tenants apart). Two properties then prove that an adapter agrees with the
in-memory reference on random evidence: the provider events it selects (priced after charge
revisions, judged by outcome definitions) equal :func:`ecp_core.reconciliation.matching.
provider_events` as multisets, and the whole report of the same statement over the same data is
the same JSON on both stores.
"""

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod
from ecp_core.errors import Conflict
from ecp_core.evidence.model import (
    ChargeRevision,
    CostMeasurement,
    CostRole,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
    digest_of,
)
from ecp_core.memory import MemoryStore
from ecp_core.money import exact_sum, money_text
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.reconciliation.model import (
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
    StoredStatement,
)
from ecp_core.reconciliation.rules import normalized, statement_digest
from ecp_core.reconciliation.service import ReconciliationService
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.strategies.evidence import amounts as evidence_amounts
from ecp_core.testing.strategies.evidence import (
    costs,
    digested,
    exact_amounts,
    revised_costs,
)
from ecp_core.testing.strategies.evidence import predicates as evidence_predicates
from ecp_core.wire import structure, unstructure

Piece = tuple[int, int, str | None, dict[str, str], Decimal]
"""A bucket: its start and end minute, model, provider dimensions and amount."""
Evidence = tuple[
    list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision], list[OutcomeDefinition]
]
"""One tenant's executions, outcomes, revisions and definitions."""

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
MINUTES = 360
END = T0 + timedelta(minutes=MINUTES)  # the statement period of the report property: [T0, END)
IMPORTED_AT = datetime(2026, 12, 1, 8, 30, 15, 123456, tzinfo=UTC)


def minute(n: int) -> datetime:
    """``n`` minutes after :data:`T0`."""
    return T0 + timedelta(minutes=n)


def stored_statement(
    tenant: str = "t1",
    provider: str = "openai",
    statement_id: str = "openai-2026-11",
    **changes: Any,
) -> StoredStatement:
    """A normalized statement with exact amounts of every shape and every scope identifier."""
    buckets = (
        ProviderBucket(
            bucket_id="B",
            period_start=T0,
            period_end=minute(60),
            amount_usd=Decimal("0.60"),  # trailing zero kept
            model="gpt-x",
            provider_dimensions={
                "project_id": "proj_a",
                "workspace_id": "ws-1",
                "organization_id": "org:1",
                "region": "eu-west-1",
            },
        ),
        ProviderBucket(
            bucket_id="b10",
            period_start=minute(60),
            period_end=minute(61),
            amount_usd=Decimal("0.000000000000000001"),  # 1E-18: the finest amount
            model=None,
            provider_dimensions={},
        ),
        ProviderBucket(
            bucket_id="b2",
            period_start=minute(59) + timedelta(microseconds=999_999),
            period_end=END,
            amount_usd=Decimal("123456789012345.123456789012345678"),  # 15 + 18 digits
            model="modèle",
            provider_dimensions={"project_id": "projé"},
        ),
    )
    statement = ProviderStatement(
        statement_id=statement_id,
        provider=provider,
        period_start=T0,
        period_end=END,
        currency=Currency.USD,
        billed_total_usd=Decimal("123456789012345.723456789012345679"),
        source_kind=SourceKind.COST_API,
        buckets=buckets,
    )
    statement = normalized(attrs.evolve(statement, **changes))
    return StoredStatement(
        tenant_id=tenant,
        statement=statement,
        digest=statement_digest(statement),
        imported_at=IMPORTED_AT,
        imported_by="key-1",
    )


def spelled(stored: StoredStatement) -> tuple[Any, ...]:
    """Every amount as the wire writes it, and each time with its offset."""
    statement = stored.statement
    return (
        money_text(statement.billed_total_usd),
        [money_text(bucket.amount_usd) for bucket in statement.buckets],
        [
            (bucket.period_start.utcoffset(), bucket.period_end.utcoffset())
            for bucket in statement.buckets
        ],
        (statement.period_start.utcoffset(), stored.imported_at.utcoffset()),
    )


# --- the statements repository ------------------------------------------------------------------


# --- evidence and statements drawn at random ----------------------------------------------------

# Instants around the edges that matter: the statement period's, the buckets' (whole minutes),
# one microsecond before them, and times well outside.
edges = st.sampled_from([0, 0, 1, 59, 60, 120, 180, 359, MINUTES, MINUTES + 1, -1, -60])
moments = st.one_of(
    st.builds(
        lambda m, shift: minute(m) + shift,
        edges,
        st.sampled_from([timedelta(0), timedelta(0), timedelta(microseconds=-1)]),
    ),
    st.builds(
        lambda m, s: minute(m) + timedelta(seconds=s),
        st.integers(-30, MINUTES + 30),
        st.integers(0, 59),
    ),
)
# Exponents from -18 to +2: the evidence's own spelling must not show in the report.
money = evidence_amounts(exponents=(-18, 2))
ids = st.sampled_from(["a", "b", "B", "a1", "é", "Z", "10", "9"])
MOSTLY_MEASURED = [CostMeasurement.MEASURED] * 4 + [*CostMeasurement]
scalars = st.sampled_from([True, False, 1, 1.0, 0, 0.5, 2.5, 1e300, "1", "a", "true", ""])
# Only the string "openai" is the provider: not another one, not its capitals, not a number, and
# not an event without one.
providers = st.sampled_from([*["openai"] * 6, "anthropic", "OpenAI", 1, None])
scope = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["m1", "m1", "m2", 2.5, True]),
        "project_id": st.sampled_from(["p1", "p1", "p2", 3, "P1"]),
        "workspace_id": st.sampled_from(["w1", "w2"]),
        "organization_id": st.just("o1"),
        "region": st.sampled_from(["eu", 1.0]),
        "seed": scalars,  # not a scope identifier
    },
)
metadata = st.builds(
    lambda provider, rest: rest if provider is None else {"provider": provider, **rest},
    providers,
    scope,
)
WORKFLOWS = ["wf", "wf", "wf", "wf2"]
VERSIONS = ["v1", "v1", "v2", "V10"]


@st.composite
def execution_fields(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an execution event but its ids."""
    cost = draw(costs(money, summary_odds=7, measurements=MOSTLY_MEASURED))
    return {
        "workflow_id": draw(st.sampled_from(WORKFLOWS)),
        "workflow_version": draw(st.sampled_from(VERSIONS)),
        "occurred_at": draw(moments),
        # Unattributed events (no run), and run ids shared across versions and workflows.
        "run_id": draw(st.one_of(st.none(), st.sampled_from(["r1", "r1", "r2", "r3"]))),
        "attempt": draw(st.sampled_from([1, 1, 2])),
        "cost_usd": cost.cost_usd,
        "cost_measurement": cost.measurement,
        "cost_role": cost.role,
        "metadata": draw(metadata),
    }


predicates = st.one_of(
    st.just(SuccessPredicate(kind=PredicateKind.EQUALS, value=True)),
    evidence_predicates(
        scalars, st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(1), Decimal(-1)])
    ),
)


# A few instants that outcomes are asserted at and reports are made at: an assertion made at the
# very instant of the report counts.
assertion_times = st.sampled_from([minute(-1), minute(0), minute(60), minute(180), END])


@st.composite
def evidence(draw: st.DrawFn, fitted: Sequence[dict[str, Any]] = ()) -> Evidence:
    """One tenant's evidence: executions, outcome assertions, charge revisions, definitions.

    ``fitted`` are the fields of execution events made to match buckets; random ones join them.
    """
    executions: list[ExecutionEvent] = []
    drawn = [*fitted, *draw(st.lists(execution_fields(), min_size=5, max_size=30))]
    for index, fields in enumerate(drawn):
        charge = None if fields["cost_role"] is CostRole.SUMMARY else f"c{index}"
        executions.append(ExecutionEvent(event_id=f"e{index:02d}", charge_id=charge, **fields))
    charges = [e.charge_id for e in executions if e.charge_id is not None] or ["c0"]
    revisions = [
        ChargeRevision(
            event_id=f"rev-{revision_id}",
            # Mostly the first charges, so one charge is often revised more than once.
            charge_id=draw(st.sampled_from([*charges[:2] * 4, *charges, "unknown-charge"])),
            # Few instants, so one charge's revisions tie on revised_at and the event id decides.
            revised_at=draw(st.sampled_from([minute(1), minute(1), minute(400), minute(-5)])),
            cost_usd=cost,
            cost_measurement=measurement,
        )
        for revision_id in draw(st.lists(ids, unique=True, max_size=6))
        for cost, measurement in [draw(revised_costs(money))]
    ]
    # Runs as the events name them (workflow, version, run id), and a few no event names.
    runs = sorted({(e.workflow_id, e.workflow_version, e.run_id) for e in executions if e.run_id})
    others = st.tuples(
        st.sampled_from(WORKFLOWS), st.sampled_from(VERSIONS), st.sampled_from(["r1", "r2", "r3"])
    )
    outcomes = [
        OutcomeEvent(
            event_id=f"o-{outcome_id}",
            workflow_id=workflow_id,
            workflow_version=version,
            run_id=run_id,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            asserted_at=draw(st.one_of(assertion_times, moments)),
            value=draw(st.sampled_from([True, True, True, False, False, 1, 0.5, "a"])),
        )
        for outcome_id in draw(st.lists(ids, unique=True, min_size=2, max_size=8))
        for workflow_id, version, run_id in [
            draw(st.one_of(st.sampled_from(runs), others) if runs else others)
        ]
    ]
    definitions = [
        OutcomeDefinition(
            tenant_id="?",
            workflow_id=workflow_id,
            workflow_version=version,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            predicate=(predicate := draw(predicates)),
            digest=digest_of(predicate),
            created_at=T0,
            created_by="key-1",
        )
        for workflow_id, version in itertools.product(["wf", "wf2"], ["v1", "v2", "V10"])
        if draw(st.integers(0, 3)) > 0
    ]
    return executions, outcomes, revisions, definitions


# The outcome clock: at, before, inside and after the assertions' times.
clocks = st.one_of(assertion_times, moments, st.just(END + timedelta(days=30)))


def clock_for(outcomes: Iterable[OutcomeEvent]) -> st.SearchStrategy[datetime]:
    """The outcome clock; often the very instant an outcome was asserted at (which counts)."""
    asserted = sorted({outcome.asserted_at for outcome in outcomes})
    return st.one_of(st.sampled_from(asserted), clocks) if asserted else clocks


windows = st.builds(
    lambda start, end: (minute(start), minute(end)),
    st.sampled_from([-60, 0, 0, 0, 60, 179]),
    st.sampled_from([1, 180, MINUTES, MINUTES, MINUTES, MINUTES + 60]),
).filter(lambda window: window[0] < window[1])


def store(unit_of_work: UnitOfWorkFactory, tenant: str, data: Evidence) -> None:
    """Store ``data`` as ``tenant``'s evidence."""
    executions, outcomes, revisions, definitions = data
    with unit_of_work() as tx:
        tx.evidence.add_executions(tenant, [digested(e) for e in executions])
        tx.evidence.add_outcomes(tenant, [digested(o) for o in outcomes])
        tx.evidence.add_revisions(tenant, [digested(r) for r in revisions])
        for definition in definitions:
            tx.evidence.add_definition(attrs.evolve(definition, tenant_id=tenant))
        tx.commit()


def provider_events(
    unit_of_work: UnitOfWorkFactory, tenant: str, window: ProviderWindow, limit: int = 10_000
) -> Counter[tuple[Any, ...]]:
    """The provider events as a multiset of their fields (Decimals and instants by value)."""
    with unit_of_work() as tx:
        events = tx.evidence.provider_events(tenant, window, limit=limit)
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


_tenants = itertools.count()


# --- whole reports -------------------------------------------------------------------------------

models = st.sampled_from([None, None, "m1", "m2"])
dimensions = st.fixed_dictionaries(
    {},
    optional={"project_id": st.sampled_from(["p1", "p2", "P1"]), "workspace_id": st.just("w1")},
)
# Amounts as importers write them: plain notation down to 1E-18 (exponents above zero are a
# known divergence, see test_an_amount_written_with_a_positive_exponent_reports_the_same).
amounts = exact_amounts(mantissas=(1, 10**6))


@st.composite
def layouts(draw: st.DrawFn) -> list[Piece]:
    """Buckets that tile the period, plus a few anywhere in it.

    Some tiles are split by project or by model, some left out; the extra buckets may overlap.
    """
    cuts = sorted(draw(st.sets(st.sampled_from([1, 59, 60, 120, 180, 359]), max_size=4)))
    pieces: list[tuple[int, int, str | None, dict[str, str]]] = []
    for start, end in itertools.pairwise([0, *cuts, MINUTES]):
        shape = draw(st.sampled_from(["one", "one", "by project", "by model", "none"]))
        model = draw(models)
        if shape == "one":
            pieces.append((start, end, model, draw(dimensions)))
        elif shape == "by project":
            pieces.extend((start, end, model, {"project_id": p}) for p in ("p1", "p2"))
        elif shape == "by model":
            dims = draw(dimensions)
            pieces.extend((start, end, each, dims) for each in ("m1", "m2"))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2])) or (0 if pieces else 1)):
        start = draw(st.integers(0, MINUTES - 1))
        pieces.append(
            (start, draw(st.integers(start + 1, MINUTES)), draw(models), draw(dimensions))
        )
    return [(*piece, draw(amounts)) for piece in pieces]


def statement_data(layout: Sequence[Piece], statement_id: str = "s1") -> dict[str, Any]:
    """The JSON of a statement (bucket ids chosen so their order is not the layout's)."""
    buckets: list[dict[str, Any]] = []
    for index, (start, end, model, dims, amount) in enumerate(layout):
        bucket: dict[str, Any] = {
            "bucket_id": f"{'bB'[index % 2]}{index}",
            "period_start": minute(start).isoformat(),
            "period_end": minute(end).isoformat(),
            "amount_usd": str(amount),
        }
        if model is not None:
            bucket["model"] = model
        if dims:
            bucket["provider_dimensions"] = dims
        buckets.append(bucket)
    total = exact_sum(amount for *_, amount in layout)
    return {
        "statement_id": statement_id,
        "provider": "openai",
        "period_start": T0.isoformat(),
        "period_end": END.isoformat(),
        "currency": "USD",
        "billed_total_usd": str(total),
        "source_kind": "manual",
        "buckets": buckets,
    }


ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="?")


def reports(
    stores: list[UnitOfWorkFactory],
    tenant: str,
    data: Evidence,
    now: datetime,
    statement: dict[str, Any],
) -> list[Any]:
    """The report of ``statement`` over ``data`` on each store, as JSON."""
    actor = attrs.evolve(ADMIN, tenant_id=tenant)
    answers: list[Any] = []
    for unit_of_work in stores:
        store(unit_of_work, tenant, data)
        service = ReconciliationService(unit_of_work, FixedClock(now))
        _, created = service.import_statement(actor, structure(statement, ProviderStatement))
        assert created is True
        answers.append(unstructure(service.report(tenant, "openai", statement["statement_id"])))
    return answers


@st.composite
def fitted_fields(draw: st.DrawFn, piece: Piece) -> dict[str, Any]:
    """A measured charge that falls into the bucket ``piece`` (at its start, or anywhere in it)."""
    start, end, model, dims, _ = piece
    fields = draw(execution_fields())
    seconds = draw(st.one_of(st.just(0), st.integers(0, (end - start) * 60 - 1)))
    extra = {} if model else draw(st.fixed_dictionaries({}, optional={"model": st.just("m1")}))
    return fields | {
        "occurred_at": minute(start) + timedelta(seconds=seconds),
        "metadata": {"provider": "openai", **extra, **({"model": model} if model else {}), **dims},
        "cost_role": CostRole.CHARGE,
        "cost_measurement": CostMeasurement.MEASURED,
        "cost_usd": draw(amounts),
    }


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Piece], Evidence]:
    """A statement layout and evidence in which most buckets find a measured charge or more."""
    layout = draw(layouts())
    fitted: list[dict[str, Any]] = []
    for piece in layout:
        fitted.extend(draw(st.lists(fitted_fields(piece), max_size=2)))
    return layout, draw(evidence(fitted))


class StatementRepositoryConformance(StoreSuite):
    """Provider statements: exact round trip, one per identity, tenants apart."""

    @pytest.mark.spec("§2.9 statement-digest")
    def test_a_statement_round_trips_exactly(self, uow: UnitOfWorkFactory) -> None:
        """A statement round trips exactly."""
        stored = stored_statement()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(stored)
            tx.commit()
        with uow() as tx:
            found = tx.reconciliation.statement("t1", "openai", "openai-2026-11")
        assert found == stored
        assert [bucket.bucket_id for bucket in found.statement.buckets] == ["B", "b10", "b2"]
        assert spelled(found) == (
            "123456789012345.723456789012345679",
            ["0.60", "0.000000000000000001", "123456789012345.123456789012345678"],
            [(timedelta(0), timedelta(0))] * 3,
            (timedelta(0), timedelta(0)),
        )
        assert found.statement.buckets[2].period_start.microsecond == 999_999
        assert found.statement.buckets[1].model is None
        assert found.statement.buckets[1].provider_dimensions == {}
        # What was read back has the digest of what was written.
        assert statement_digest(found.statement) == stored.digest

    def test_a_statement_is_kept_only_when_committed(self, uow: UnitOfWorkFactory) -> None:
        """A statement is kept only when committed."""
        with uow() as tx:
            tx.reconciliation.add_statement(stored_statement())
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(stored_statement())
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") is not None

    @pytest.mark.spec("§2.9 statement-digest")
    def test_the_same_identity_conflicts_and_the_first_statement_stays(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """The same identity conflicts and the first statement stays."""
        first = stored_statement()
        with uow() as tx:
            tx.reconciliation.add_statement(first)
            tx.commit()
        other = stored_statement(source_kind=SourceKind.INVOICE)
        assert other.digest != first.digest
        for again in (other, first):  # other content, or the very same: the identity is taken
            with uow() as tx, pytest.raises(Conflict, match="statement openai-2026-11 of openai"):
                tx.reconciliation.add_statement(again)
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == first
            # The identity is (tenant, provider, statement_id): a neighbour in each part is new.
            neighbours = [
                stored_statement(provider="anthropic", source_kind=SourceKind.INVOICE),
                stored_statement(statement_id="openai-2026-11b", source_kind=SourceKind.INVOICE),
                stored_statement(statement_id="OPENAI-2026-11", source_kind=SourceKind.INVOICE),
            ]
            for neighbour in neighbours:
                tx.reconciliation.add_statement(neighbour)
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == first
            for neighbour in neighbours:
                statement = neighbour.statement
                found = tx.reconciliation.statement(
                    "t1", statement.provider, statement.statement_id
                )
                assert found == neighbour

    @pytest.mark.spec("§5 tenant-isolation")
    def test_statements_are_tenant_isolated(self, uow: UnitOfWorkFactory) -> None:
        """A statement is seen only by its tenant."""
        mine = stored_statement()
        theirs = stored_statement(tenant="t2", source_kind=SourceKind.INVOICE)
        with uow() as tx:
            tx.reconciliation.add_statement(mine)
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t2", "openai", "openai-2026-11") is None
            tx.reconciliation.add_statement(theirs)  # the same provider and id in another tenant
            tx.commit()
        with uow() as tx:
            assert tx.reconciliation.statement("t1", "openai", "openai-2026-11") == mine
            assert tx.reconciliation.statement("t2", "openai", "openai-2026-11") == theirs
            assert tx.reconciliation.statement("t3", "openai", "openai-2026-11") is None


class ReconciliationMatchesReference(ExampleStoreSuite):
    """The adapter's provider events and whole reports equal the in-memory reference."""

    @settings(
        max_examples=300 if THOROUGH else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=evidence(), window=windows, when=st.data())
    def test_provider_events_equal_the_reference(
        self,
        open_store: StoreOpener,
        data: Evidence,
        window: tuple[datetime, datetime],
        when: st.DataObject,
    ) -> None:
        """The provider events (priced, judged, limited, tenant-scoped) equal the reference's."""
        as_of = when.draw(clock_for(data[1]), label="as_of")
        tenant = f"tenant-{next(_tenants)}"  # a new tenant of the one database per example
        reconciled = ProviderWindow(provider="openai", start=window[0], end=window[1], as_of=as_of)
        with open_store() as uow:
            reference_store = MemoryStore().unit_of_work
            for unit_of_work in (reference_store, uow):
                store(unit_of_work, tenant, data)
            reference = provider_events(reference_store, tenant, reconciled)
            actual = provider_events(uow, tenant, reconciled)
            assert actual == reference
            event(f"{min(sum(reference.values()), 5)} provider events (5: five or more)")
            statuses = {key[-1].value for key in reference}
            event(f"outcome statuses {sorted(statuses)}")
            # Other tenants' and other providers' evidence never shows.
            assert provider_events(uow, f"{tenant}-other", reconciled) == Counter()
            # Another provider, and one whose slug is "1": metadata.provider 1 (a number) is not it.
            for provider in ("anthropic", "1"):
                other = attrs.evolve(reconciled, provider=provider)
                assert provider_events(uow, tenant, other) == provider_events(
                    reference_store, tenant, other
                )
            # The limit bounds what is read (the report asks for one more than it accepts).
            total = sum(reference.values())
            if total > 1:
                limited = provider_events(uow, tenant, reconciled, limit=total - 1)
                assert sum(limited.values()) == total - 1
                assert limited <= actual

    @settings(
        max_examples=300 if THOROUGH else 40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(case=cases(), when=st.data())
    def test_a_report_is_the_same_json_on_both_stores(
        self, open_store: StoreOpener, case: tuple[list[Piece], Evidence], when: st.DataObject
    ) -> None:
        """A report is the same json on both stores."""
        layout, data = case
        now = when.draw(clock_for(data[1]), label="now")
        tenant = f"tenant-{next(_tenants)}"
        with open_store() as uow:
            reference, actual = reports(
                [MemoryStore().unit_of_work, uow],
                tenant,
                data,
                now,
                statement_data(layout),
            )
        # The FixedClock makes as_of the same on both stores; it is compared like every other field.
        assert actual == reference
        event(f"closure state {reference['closure_state']}")
        for allocation in reference["allocations"]:
            event(f"bucket {allocation['status']}")

    def test_a_report_over_known_evidence_is_the_same_json_on_both_stores(
        self, open_store: StoreOpener
    ) -> None:
        """A worked example, so the property above is seen to compare reports that say something."""
        executions = [
            ExecutionEvent(
                event_id=f"e{index}",
                workflow_id="wf",
                workflow_version=version,
                run_id=run_id,
                occurred_at=minute(at),
                cost_usd=Decimal(cost),
                cost_measurement=CostMeasurement.MEASURED,
                charge_id=f"c{index}",
                metadata={"provider": "openai", "model": "m1", "project_id": project},
            )
            for index, (version, run_id, at, cost, project) in enumerate(
                [
                    ("v1", "r1", 0, "1.5", "p1"),
                    ("v1", "r2", 59, "0.5", "p1"),
                    ("v2", None, 60, "2", "p1"),
                    ("v1", "r1", 90, "1", "p2"),
                ]
            )
        ]
        outcomes = [
            OutcomeEvent(
                event_id=f"o{index}",
                workflow_id="wf",
                workflow_version="v1",
                run_id=run_id,
                outcome_type="done",
                asserted_at=minute(0),
                value=value,
            )
            for index, (run_id, value) in enumerate([("r1", True), ("r2", False)])
        ]
        equals_true = SuccessPredicate(kind=PredicateKind.EQUALS, value=True)
        definition = OutcomeDefinition(
            tenant_id="?",
            workflow_id="wf",
            workflow_version="v1",
            outcome_type="done",
            predicate=equals_true,
            digest=digest_of(equals_true),
            created_at=T0,
            created_by="key-1",
        )
        layout = [
            (0, 60, "m1", {"project_id": "p1"}, Decimal("4.00")),
            (60, 120, None, {"project_id": "p1"}, Decimal(1)),
            (60, 120, None, {}, Decimal("0.5")),  # overlaps the p1 bucket beside it
            (180, 360, "m2", {}, Decimal("0.25")),  # nothing of m2 was measured
        ]
        with open_store() as uow:
            reference, actual = reports(
                [MemoryStore().unit_of_work, uow],
                "known",
                (executions, outcomes, [], [definition]),
                END,
                statement_data(layout),
            )
        assert actual == reference
        assert reference["closure_state"] == "unreconciled"
        assert reference["totals"] == {
            "billed_total_usd": "5.75",
            "allocated_billed_usd": "4.00",
            "unreconciled_billed_usd": "1.75",
            "telemetry_measured_usd": "5.0",
            "telemetry_variance_usd": "0.75",
            "unbilled_telemetry_usd": "0",  # refused buckets still matched their events
            "outcome_unresolved_usd": "0",
        }
        by_id = {a["bucket_id"]: a for a in reference["allocations"]}
        assert [
            (g["workflow_version"], g["outcome_status"], g["billed_usd"])
            for g in by_id["b0"]["groups"]
        ] == [
            ("v1", "failure", "1.00"),
            ("v1", "success", "3.00"),
        ]
        assert {k: (a["status"], a["overlaps_with"]) for k, a in by_id.items()} == {
            "b0": ("allocated", []),
            "B1": ("overlapping", ["b2"]),
            "b2": ("overlapping", ["B1"]),
            "B3": ("no_measured_match", []),
        }

    @pytest.mark.spec("C1 wire-values")
    def test_an_amount_written_with_a_positive_exponent_reports_the_same(
        self, open_store: StoreOpener
    ) -> None:
        """An amount written with a positive exponent reports the same."""
        executions = [
            ExecutionEvent(
                event_id=f"e{index}",
                workflow_id=f"w{index}",
                workflow_version="v1",
                occurred_at=T0,
                cost_usd=Decimal(cost),
                cost_measurement=CostMeasurement.MEASURED,
                charge_id=f"c{index}",
                metadata={"provider": "openai"},
            )
            for index, cost in enumerate(["1", "9"])
        ]
        statement = statement_data([(0, MINUTES, None, {}, Decimal("5E+2"))])
        # Spelt with a positive exponent on the wire, as a client may.
        statement["billed_total_usd"] = statement["buckets"][0]["amount_usd"] = "5E+2"
        with open_store() as uow:
            reference, actual = reports(
                [MemoryStore().unit_of_work, uow],
                "exponent",
                (executions, [], [], []),
                END,
                statement,
            )
        assert [g["billed_usd"] for g in actual["allocations"][0]["groups"]] == ["50", "450"]
        assert actual == reference
