"""What the suites over random evidence share: storing a tenant's evidence, reading its events.

Each example of those properties stores the same data in the in-memory reference and in the
adapter under test, under a new tenant, and compares what the two read back.
"""

from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from ecp_core.evidence.model import ChargeRevision, ExecutionEvent, OutcomeDefinition, OutcomeEvent
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.testing.strategies.evidence import digested

TenantEvidence = tuple[
    list[ExecutionEvent], list[OutcomeEvent], list[ChargeRevision], list[OutcomeDefinition]
]
"""One tenant's executions, outcomes, revisions and definitions, as the properties draw them."""


def store_evidence(
    unit_of_work: UnitOfWorkFactory,
    tenant: str,
    executions: Iterable[ExecutionEvent],
    outcomes: Iterable[OutcomeEvent],
    revisions: Iterable[ChargeRevision],
    definitions: Iterable[OutcomeDefinition] = (),
) -> None:
    """Store the evidence as ``tenant``'s (each definition moved to the tenant), and commit."""
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
