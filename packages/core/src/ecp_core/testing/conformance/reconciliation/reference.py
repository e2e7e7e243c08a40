"""Reconciliation on an adapter equals the in-memory reference: provider events, whole reports.

On random evidence the provider events an adapter selects (priced after charge revisions,
judged by outcome definitions) equal :func:`ecp_core.reconciliation.matching.provider_events`
as multisets, and the whole report of the same statement over the same data is the same JSON on
both stores.
"""

import itertools
from collections import Counter
from datetime import datetime
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod
from ecp_core.evidence.model import ExecutionEvent, OutcomeEvent, PredicateKind, SuccessPredicate
from ecp_core.memory import MemoryStore
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.reconciliation.model import ProviderStatement
from ecp_core.reconciliation.service import ReconciliationService
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener
from ecp_core.testing.conformance._evidence import TenantEvidence, provider_events, store_evidence
from ecp_core.testing.conformance.reconciliation.drawn import cases, clock_for, evidence, windows
from ecp_core.testing.strategies.evidence import definition as outcome_definition
from ecp_core.testing.strategies.statements import END, MINUTES, T0, Bucket, minute, statement_data
from ecp_core.types import CostMeasurement
from ecp_core.wire import structure, unstructure

_tenants = itertools.count()

ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="?")


def reports(
    stores: list[UnitOfWorkFactory],
    tenant: str,
    data: TenantEvidence,
    now: datetime,
    statement: dict[str, Any],
) -> list[Any]:
    """The report of ``statement`` over ``data`` on each store, as JSON."""
    actor = attrs.evolve(ADMIN, tenant_id=tenant)
    answers: list[Any] = []
    for unit_of_work in stores:
        store_evidence(unit_of_work, tenant, *data)
        service = ReconciliationService(unit_of_work, FixedClock(now))
        _, created = service.import_statement(actor, structure(statement, ProviderStatement))
        assert created is True
        answers.append(unstructure(service.report(tenant, "openai", statement["statement_id"])))
    return answers


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
        data: TenantEvidence,
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
                store_evidence(unit_of_work, tenant, *data)
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
        self,
        open_store: StoreOpener,
        case: tuple[list[Bucket], TenantEvidence],
        when: st.DataObject,
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
        definition = outcome_definition(
            equals_true,
            tenant_id="?",
            workflow_id="wf",
            workflow_version="v1",
            outcome_type="done",
            created_at=T0,
        )
        layout = [
            Bucket(0, 60, "m1", {"project_id": "p1"}, Decimal("4.00")),
            Bucket(60, 120, None, {"project_id": "p1"}, Decimal(1)),
            Bucket(60, 120, None, {}, Decimal("0.5")),  # overlaps the p1 bucket beside it
            Bucket(180, 360, "m2", {}, Decimal("0.25")),  # nothing of m2 was measured
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
        statement = statement_data([Bucket(0, MINUTES, None, {}, Decimal("5E+2"))])
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
