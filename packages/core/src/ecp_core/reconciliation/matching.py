"""The execution evidence a statement is reconciled against, defined once in plain Python.

A provider's events are the tenant's ``charge`` events whose ``metadata.provider`` equals the
statement's provider and whose ``occurred_at`` lies in the statement's half-open period. Each
carries its price after charge revisions and its run's outcome status by the debugger's rules
(unattributed events are unresolved). The PostgreSQL adapter computes the same rows in SQL.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal

import attrs

from ecp_core.debugger.tally import OutcomeStatus, latest_revisions, outcome_verdicts, price
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
)
from ecp_core.reconciliation.model import SCOPE_KEYS
from ecp_core.types import CostMeasurement


@attrs.frozen(kw_only=True)
class PricedEvent:
    """A provider's execution event as reconciliation sees it (after charge revisions).

    ``scope`` holds the event's provider scope identifiers (``metadata`` keys in
    :data:`SCOPE_KEYS` whose values are strings).
    """

    workflow_id: str
    workflow_version: str
    occurred_at: datetime
    model: str | None
    scope: dict[str, str]
    cost_usd: Decimal | None
    cost_measurement: CostMeasurement
    outcome_status: OutcomeStatus


@attrs.frozen(kw_only=True)
class ProviderWindow:
    """Whose events, which provider, which half-open period, outcomes judged at ``as_of``."""

    provider: str
    start: datetime
    end: datetime
    as_of: datetime


def scope_of(metadata: dict[str, object]) -> dict[str, str]:
    """The provider scope identifiers in an event's metadata."""
    return {k: v for k, v in metadata.items() if k in SCOPE_KEYS and isinstance(v, str)}


def provider_events(
    window: ProviderWindow,
    executions: Iterable[ExecutionEvent],
    outcomes: Iterable[OutcomeEvent],
    revisions: Iterable[ChargeRevision],
    definitions: Sequence[OutcomeDefinition],
) -> list[PricedEvent]:
    """The reference selection over one tenant's stored evidence."""
    chosen = [
        event
        for event in executions
        if event.cost_role is CostRole.CHARGE
        and event.metadata.get("provider") == window.provider
        and window.start <= event.occurred_at < window.end
    ]
    workflows = {event.workflow_id for event in chosen}
    by_workflow: dict[str, dict[str, OutcomeDefinition]] = defaultdict(dict)
    for definition in definitions:
        if definition.workflow_id in workflows:
            by_workflow[definition.workflow_id][definition.workflow_version] = definition
    outcomes_by: dict[str, list[OutcomeEvent]] = defaultdict(list)
    for outcome in outcomes:
        if outcome.workflow_id in workflows:
            outcomes_by[outcome.workflow_id].append(outcome)
    verdicts = {
        workflow: outcome_verdicts(outcomes_by[workflow], by_workflow[workflow], window.as_of)
        for workflow in workflows
    }
    pricing = latest_revisions(revisions)
    result = []
    for event in chosen:
        verdict = (
            None
            if event.run_id is None
            else verdicts[event.workflow_id].get((event.workflow_version, event.run_id))
        )
        status = OutcomeStatus.UNRESOLVED if verdict is None else verdict.status
        cost, measurement = price(event, pricing)
        model = event.metadata.get("model")
        result.append(
            PricedEvent(
                workflow_id=event.workflow_id,
                workflow_version=event.workflow_version,
                occurred_at=event.occurred_at,
                model=model if isinstance(model, str) else None,
                scope=scope_of(event.metadata),
                cost_usd=cost,
                cost_measurement=measurement,
                outcome_status=status,
            )
        )
    return result
