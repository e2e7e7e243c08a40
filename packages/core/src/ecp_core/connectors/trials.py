"""A connector test: reserve the worst case, call once, commit what was measured, release the rest.

``POST /v1/connectors/{ref}/test`` always answers 200 with a :class:`ConnectorTestResponse`
(ADR 0044); only a malformed request (422) or an unknown connector (404) is an error. In one unit
of work the scope is locked, the request's idempotency record looked up, the worst case planned
within both caps and reserved; the call runs outside any transaction; a second unit of work
commits the measured cost as a ledger entry, releases the reservation and stores the answer.
Over a cap, nothing is called and nothing is charged.
"""

import enum
import logging
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

import attrs

from ecp_core.canonical import json_digest
from ecp_core.connectors.backends import BackendCall, call_backend, plan_test
from ecp_core.connectors.model import (
    CleanupStatus,
    ConnectorCostEntry,
    ConnectorTest,
    ConnectorTestRequest,
    ConnectorTestResponse,
    TrialState,
    usd_amount,
)
from ecp_core.connectors.rules import reserve, room, settle
from ecp_core.connectors.service import ConnectorService
from ecp_core.errors import Conflict
from ecp_core.identity import ActorIdentity
from ecp_core.money import money_text
from ecp_core.ports.connectors import ConnectorsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.wire import canonical_decimal

log = logging.getLogger("ecp_core.connectors")


class TrialOutcome(enum.StrEnum):
    """How a test ended, for the metric: called and ok, called and not ok, refused, repeated."""

    OK = "ok"
    FAILED = "failed"
    REFUSED = "refused"
    REPLAYED = "replayed"


@attrs.frozen
class TrialResult:
    """The answer and how the test ended."""

    response: ConnectorTestResponse
    outcome: TrialOutcome


def request_digest(ref: str, request: ConnectorTestRequest) -> str:
    """One digest per request meaning (``0.4`` and ``"0.40"`` are the same amount)."""

    def amount(value: object) -> str | None:
        return None if value is None else money_text(canonical_decimal(usd_amount(value)))

    return json_digest(
        {
            "connector_ref": ref,
            "campaign_id": request.campaign_id,
            "operation_id": request.operation_id,
            "run_id": request.run_id,
            "max_cost_usd": amount(request.max_cost_usd),
            "run_cap_usd": amount(request.run_cap_usd),
        }
    )


def _milliseconds(start: datetime, end: datetime) -> float:
    return round(max(0.0, (end - start).total_seconds() * 1000), 3)


class ConnectorTrials:
    """Runs connector tests under their cost caps."""

    def __init__(
        self,
        uow: Callable[[], ConnectorsUnit],
        clock: Clock,
        ids: IdFactory,
        connectors: ConnectorService,
    ) -> None:
        """Wire the tests over the connectors (which know the backends)."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._connectors = connectors

    def test(self, actor: ActorIdentity, ref: str, request: ConnectorTestRequest) -> TrialResult:
        """Test connector ``ref`` once under the request's caps (see the module's outline)."""
        connector = self._connectors.connector(actor.tenant_id, ref)  # 404 before anything
        setup = self._connectors.setup
        tenant, digest = actor.tenant_id, request_digest(ref, request)
        max_cost = usd_amount(request.max_cost_usd)
        cap = None if request.run_cap_usd is None else usd_amount(request.run_cap_usd)
        with self._uow() as uow:
            costs = uow.connector_costs
            scope = costs.lock_scope(tenant, request.campaign_id, request.run_id)
            found = costs.find_test(tenant, request.campaign_id, request.operation_id)
            if found is not None:
                return TrialResult(self._replayed(found, digest), TrialOutcome.REPLAYED)
            left = room(scope, cap)
            plan = plan_test(connector, setup, max_cost, left)
            record = ConnectorTest(
                tenant_id=tenant,
                campaign_id=request.campaign_id,
                operation_id=request.operation_id,
                run_id=request.run_id,
                connector_ref=ref,
                request_digest=digest,
                state=TrialState.RESERVED,
                reserved_usd=plan.reserve_usd,
                created_at=self._clock.now(),
            )
            held = None if plan.refusal is not None else reserve(scope, plan.reserve_usd, cap)
            if held is None:
                response = ConnectorTestResponse(
                    ok=False,
                    latency_ms=0.0,
                    cleanup_status=CleanupStatus.NOT_RESERVED,
                    detail=plan.refusal or "run_cap_usd: the reservation does not fit",
                    estimated_cost_usd=plan.reserve_usd,
                    campaign_id=request.campaign_id,
                    operation_id=request.operation_id,
                )
                finished = attrs.evolve(
                    record, state=TrialState.FINISHED, reserved_usd=Decimal(0), response=response
                )
                costs.add_test(finished)
                uow.commit()
                self._log(tenant, ref, request, TrialOutcome.REFUSED, None)
                return TrialResult(response, TrialOutcome.REFUSED)
            costs.save_scope(held)
            costs.add_test(record)
            uow.commit()
        started = self._clock.now()
        called = call_backend(connector, setup, plan)
        latency = _milliseconds(started, self._clock.now())
        return self._finish(record, called, latency)

    def _replayed(self, found: ConnectorTest, digest: str) -> ConnectorTestResponse:
        if found.request_digest != digest:
            raise Conflict(
                f"operation {found.operation_id!r} of campaign {found.campaign_id!r} was a"
                " different test request: use a new operation_id"
            )
        if found.response is None:
            raise Conflict(
                f"operation {found.operation_id!r} of campaign {found.campaign_id!r} is still"
                " being tested; repeat the request once it has finished"
            )
        return found.response

    def _finish(self, record: ConnectorTest, called: BackendCall, latency: float) -> TrialResult:
        """Commit the measured cost, release the reservation and store the answer, at once."""
        tenant = record.tenant_id
        cost_event_id = self._ids.new_id()
        response = ConnectorTestResponse(
            ok=called.ok,
            latency_ms=latency,
            campaign_id=record.campaign_id,
            operation_id=record.operation_id,
            cleanup_status=CleanupStatus.RELEASED,
            cost_event_id=cost_event_id,
            cost_measurement=called.measurement,
            detail=called.detail,
            estimated_cost_usd=record.reserved_usd,
            provider_request_id=called.provider_request_id,
        )
        with self._uow() as uow:
            costs = uow.connector_costs
            scope = costs.lock_scope(tenant, record.campaign_id, record.run_id)
            stored = costs.find_test(tenant, record.campaign_id, record.operation_id)
            if stored is not None and stored.response is not None:
                return self._settled_meanwhile(stored, stored.response, called)
            costs.save_scope(settle(scope, record.reserved_usd, called.cost_usd))
            costs.add_entry(
                tenant,
                ConnectorCostEntry(
                    cost_event_id=cost_event_id,
                    campaign_id=record.campaign_id,
                    run_id=record.run_id,
                    operation_id=record.operation_id,
                    connector_ref=record.connector_ref,
                    amount_usd=canonical_decimal(called.cost_usd),
                    cost_measurement=called.measurement,
                    created_at=self._clock.now(),
                ),
            )
            costs.save_test(attrs.evolve(record, state=TrialState.FINISHED, response=response))
            uow.commit()
        outcome = TrialOutcome.OK if called.ok else TrialOutcome.FAILED
        self._log(tenant, record.connector_ref, record, outcome, called.cost_usd)
        return TrialResult(response, outcome)

    def _settled_meanwhile(
        self, stored: ConnectorTest, answer: ConnectorTestResponse, called: BackendCall
    ) -> TrialResult:
        """The sweep took this test for abandoned (ADR 0050): that settlement stands.

        The caller gets the stored answer, like any repeat; the measured cost is only logged.
        """
        log.warning(
            "connector test finished after it was settled as abandoned",
            extra={
                "tenant_id": stored.tenant_id,
                "connector_ref": stored.connector_ref,
                "campaign_id": stored.campaign_id,
                "operation_id": stored.operation_id,
                "run_id": stored.run_id,
                "measured_usd": money_text(called.cost_usd),
                "measurement": called.measurement.value,
            },
        )
        return TrialResult(answer, TrialOutcome.FAILED)

    def _log(
        self,
        tenant: str,
        ref: str,
        ids: ConnectorTestRequest | ConnectorTest,
        outcome: TrialOutcome,
        committed: Decimal | None,
    ) -> None:
        log.info(
            "connector test",
            extra={
                "tenant_id": tenant,
                "connector_ref": ref,
                "campaign_id": ids.campaign_id,
                "operation_id": ids.operation_id,
                "run_id": ids.run_id,
                "outcome": outcome.value,
                "committed_usd": None if committed is None else money_text(committed),
            },
        )


__all__ = ["ConnectorTrials", "TrialOutcome", "TrialResult", "request_digest"]
