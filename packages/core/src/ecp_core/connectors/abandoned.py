"""Reservations a dead process left behind: settled as the timeout path would settle them.

A connector test reserves its worst case, calls, then settles. A process that dies in between
leaves the reservation held and its (campaign, operation) answering 409 "still being tested".
A reservation older than :func:`abandoned_after` (twice the test timeout, the server's ``ECP_CONNECTOR_TEST_TIMEOUT_SECONDS``,
plus :data:`ABANDON_MARGIN_SECONDS`) belongs to no live test: the sweep commits its worst case as
``estimated`` (the provider may have served and billed the call), releases the reservation,
writes the ledger entry and stores the answer ``ok: false`` saying the test was abandoned, so a
repeat of the operation gets that answer (ADR 0050). Totals never grow: what was reserved is
now committed, so committed + reserved stays within every cap.
"""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import attrs

from ecp_core.connectors.model import (
    CleanupStatus,
    ConnectorCostEntry,
    ConnectorTest,
    ConnectorTestResponse,
    TrialState,
)
from ecp_core.connectors.rules import settle
from ecp_core.money import money_text
from ecp_core.ports.connectors import ConnectorsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.types import CostMeasurement
from ecp_core.wire import canonical_decimal

log = logging.getLogger("ecp_core.connectors")

ABANDON_MARGIN_SECONDS = 60.0
"""Added to twice the test timeout: a live test's second transaction may wait for a pooled
connection or its scope's lock, and processes' clocks may differ a little."""

SWEEP_BATCH = 50
"""At most this many reservations are settled in one unit of work, oldest first."""


def abandoned_after(timeout_seconds: float) -> timedelta:
    """How old a held reservation is when no live test can still settle it."""
    return timedelta(seconds=2 * timeout_seconds + ABANDON_MARGIN_SECONDS)


def abandoned_answer(
    test: ConnectorTest, cost_event_id: str, bound: timedelta
) -> ConnectorTestResponse:
    """The stored answer of an abandoned test: not ok, its worst case committed as estimated."""
    worst = money_text(test.reserved_usd)
    return ConnectorTestResponse(
        ok=False,
        latency_ms=0.0,
        campaign_id=test.campaign_id,
        operation_id=test.operation_id,
        cleanup_status=CleanupStatus.ABANDONED,
        cost_event_id=cost_event_id,
        cost_measurement=CostMeasurement.ESTIMATED,
        detail=(
            f"abandoned: the test reserved at {test.created_at.isoformat()} was not settled"
            f" within {bound.total_seconds():g} seconds (its process stopped); the provider may"
            f" have served the call, so its worst case {worst} USD was committed as estimated"
        ),
        estimated_cost_usd=test.reserved_usd,
    )


@attrs.frozen
class SettledReservation:
    """One abandoned test the sweep settled, and the ledger entry that committed its worst case."""

    test: ConnectorTest
    entry: ConnectorCostEntry


class AbandonedReservations:
    """Finds held reservations older than the bound and settles each exactly once."""

    def __init__(
        self,
        uow: Callable[[], ConnectorsUnit],
        clock: Clock,
        ids: IdFactory,
        *,
        timeout_seconds: float,
    ) -> None:
        """Settle reservations held longer than :func:`abandoned_after` ``timeout_seconds``."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._bound = abandoned_after(timeout_seconds)

    @property
    def bound(self) -> timedelta:
        """How old a reservation must be to count as abandoned."""
        return self._bound

    def settle(self, *, limit: int = SWEEP_BATCH) -> list[SettledReservation]:
        """Settle up to ``limit`` abandoned reservations, oldest first, in one unit of work.

        Tests and scopes another unit of work holds (a live test settling, another sweeper) are
        skipped until a later pass; nothing is settled twice.
        """
        if limit < 1:
            msg = "the batch of abandoned reservations needs a limit of at least 1"
            raise ValueError(msg)
        with self._uow() as uow:
            now = self._clock.now()
            stale = uow.connector_costs.claim_abandoned(now - self._bound, limit)
            settled = [self._settle_one(uow, test, now) for test in stale]
            uow.commit()
        for one in settled:
            self._log(one)
        return settled

    def _settle_one(
        self, uow: ConnectorsUnit, test: ConnectorTest, now: datetime
    ) -> SettledReservation:
        costs = uow.connector_costs
        scope = costs.lock_scope(test.tenant_id, test.campaign_id, test.run_id)  # held already
        costs.save_scope(settle(scope, test.reserved_usd, test.reserved_usd))
        cost_event_id = self._ids.new_id()
        entry = ConnectorCostEntry(
            cost_event_id=cost_event_id,
            campaign_id=test.campaign_id,
            run_id=test.run_id,
            operation_id=test.operation_id,
            connector_ref=test.connector_ref,
            amount_usd=canonical_decimal(test.reserved_usd),
            cost_measurement=CostMeasurement.ESTIMATED,
            created_at=now,
        )
        costs.add_entry(test.tenant_id, entry)
        response = abandoned_answer(test, cost_event_id, self._bound)
        finished = attrs.evolve(test, state=TrialState.FINISHED, response=response)
        costs.save_test(finished)
        return SettledReservation(finished, entry)

    def _log(self, one: SettledReservation) -> None:
        test = one.test
        log.warning(
            "connector reservation abandoned",
            extra={
                "tenant_id": test.tenant_id,
                "connector_ref": test.connector_ref,
                "campaign_id": test.campaign_id,
                "operation_id": test.operation_id,
                "run_id": test.run_id,
                "reserved_at": test.created_at.isoformat(),
                "committed_usd": money_text(one.entry.amount_usd),
                "cost_event_id": one.entry.cost_event_id,
            },
        )


__all__ = [
    "ABANDON_MARGIN_SECONDS",
    "SWEEP_BATCH",
    "AbandonedReservations",
    "SettledReservation",
    "abandoned_after",
    "abandoned_answer",
]
