"""Use cases of backtests: request (metered, queued), read, list, and the worker's sweep.

``request`` stores the queued backtest, its sealed request and the meters' reservation in one
unit of work; an exact retry (same tenant, same canonical request, under any known digest key)
returns the stored backtest and takes nothing. ``run_queued`` claims a backtest, replays it
off the request (:mod:`ecp_core.backtests.execution`), saves each case as it ends, and
finishes it: the result, the sealed request dropped, and the meters keeping the calls used and
returning the rest, in one unit of work (ADR 0038).
"""

import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import attrs

from ecp_core.backtests.execution import calls_until, run_case
from ecp_core.backtests.limits import (
    BacktestSetup,
    day_start,
    refuse_past_daily_cap,
)
from ecp_core.backtests.migration import ModelMigration, model_migration
from ecp_core.backtests.model import (
    CLAIM_CLASS,
    METHOD_VERSION,
    Backtest,
    BacktestRequest,
    BacktestStatus,
    CaseOutcome,
    Metering,
    SealedInputs,
)
from ecp_core.backtests.rules import (
    LIMITATIONS,
    calls_reserved,
    catalog_evidence,
    decide,
    not_run,
    preflight,
)
from ecp_core.entitlements.model import Meter, Reservation
from ecp_core.entitlements.rules import backtest_units
from ecp_core.entitlements.service import Entitlements
from ecp_core.errors import Configurable, FieldError, NotFound, ValidationFailed
from ecp_core.identity import ActorIdentity
from ecp_core.pages import decode_cursor, next_page
from ecp_core.ports.backtests import BacktestsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.wire import structure

log = logging.getLogger("ecp_core.backtests")

LIST_CURSOR = "backtests"


@attrs.frozen
class ClaimedBacktest:
    """A backtest this worker holds, with its request (None once its inputs are gone)."""

    backtest: Backtest
    request: BacktestRequest | None


class BacktestService:
    """Requests, reads and runs backtests; ``setup`` None: backtests are off (422 on request)."""

    def __init__(
        self,
        uow: Callable[[], BacktestsUnit],
        clock: Clock,
        ids: IdFactory,
        setup: BacktestSetup | None = None,
        entitlements: Entitlements | None = None,
    ) -> None:
        """Wire the service; ``entitlements`` meters backtests and calls (None: no quotas)."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._setup = setup
        self._entitlements = entitlements

    def request(self, actor: ActorIdentity, request: BacktestRequest) -> tuple[Backtest, bool]:
        """Queue a backtest; ``(backtest, created)``. An exact retry returns the stored one."""
        if self._setup is None:
            raise ValidationFailed(
                "backtests are off: they need a model catalog and a backtest digest key",
                errors=[
                    FieldError(loc=loc, msg="no model can be backtested on this server")
                    for loc in (("incumbent", "model"), ("candidate", "model"), ("judge",))
                ],
                configuration=(Configurable.MODEL_CATALOG, Configurable.BACKTEST_DIGEST_KEY),
            )
        evidence = catalog_evidence(request, self._setup.provider.catalog)
        limits, keys = self._setup.limits, self._setup.keys
        reserved = calls_reserved(len(request.cases))
        cap = limits.max_calls_per_backtest
        if cap is not None and reserved > cap:
            raise ValidationFailed(
                "the backtest needs more provider calls than this server allows",
                errors=[FieldError(loc=("cases",), msg=f"at most {cap // 4} cases here")],
            )
        tenant, now = actor.tenant_id, self._clock.now()
        with self._uow() as uow:
            if self._entitlements is not None:
                self._entitlements.current(uow, tenant)  # 402 before anything else
            uow.backtests.lock_tenant(tenant)
            found = uow.backtests.find(tenant, keys.known_digests(request))
            if found is not None:
                return found, False  # no call, no charge
            self._check_daily_cap(uow, tenant, reserved, now)
            metering = Metering(calls_reserved=reserved, backtests_reserved=1)
            if self._entitlements is not None:
                taken = self._entitlements.reserve(uow, tenant, backtest_units(len(request.cases)))
                metering = attrs.evolve(metering, period_start=taken.period_start)
            backtest = Backtest(
                backtest_id=self._ids.new_id(),
                tenant_id=tenant,
                status=BacktestStatus.QUEUED,
                created_at=now,
                requested_by=actor.subject,
                request_digest=keys.digest(request),
                digest_key_id=keys.key_id,
                claim_class=CLAIM_CLASS,
                method_version=METHOD_VERSION,
                case_count=len(request.cases),
                min_success_rate=request.constraints.min_success_rate,
                limitations=LIMITATIONS,
                evaluation_evidence=evidence,
                metering=metering,
                preflight_abstain_reasons=preflight(request, evidence),
            )
            uow.backtests.add(backtest, keys.seal(request))
            uow.commit()
        log.info(
            "backtest queued",
            extra={"tenant_id": tenant, "backtest_id": backtest.backtest_id, "calls": reserved},
        )
        return backtest, True

    def _check_daily_cap(
        self, uow: BacktestsUnit, tenant: str, reserved: int, now: datetime
    ) -> None:
        assert self._setup is not None  # noqa: S101 - only called by request
        cap = self._setup.limits.max_calls_per_day
        if cap is not None:
            refuse_past_daily_cap(
                uow.backtests.calls_since(tenant, day_start(now)), reserved, cap, now
            )

    def get(self, tenant_id: str, backtest_id: str) -> Backtest:
        """One of the tenant's backtests; NotFound otherwise."""
        with self._uow() as uow:
            found = uow.backtests.get(tenant_id, backtest_id)
        if found is None:
            raise NotFound(f"backtest {backtest_id} not found")
        return found

    def migration(self, tenant_id: str, backtest_id: str) -> ModelMigration:
        """The model-migration result of a finished backtest; NotFound until it finishes."""
        found = self.get(tenant_id, backtest_id)
        if found.status is not BacktestStatus.FINISHED:
            raise NotFound(f"backtest {backtest_id} has no migration result until it finishes")
        return model_migration(found)

    def page(
        self, tenant_id: str, *, limit: int, cursor: str | None = None
    ) -> tuple[list[Backtest], str | None]:
        """The tenant's backtests newest first, and the cursor of the next page."""
        before = None
        if cursor is not None:
            moment, backtest_id = decode_cursor(LIST_CURSOR, cursor, 2)
            before = (datetime.fromisoformat(moment), backtest_id)
        with self._uow() as uow:
            found = uow.backtests.page(tenant_id, limit=limit + 1, before=before)
        return next_page(
            found, limit, LIST_CURSOR, lambda b: (b.created_at.isoformat(), b.backtest_id)
        )

    def run_queued(self, *, limit: int = 1) -> list[str]:
        """Claim and run up to ``limit`` backtests, one after another; their ids."""
        ran = []
        for _ in range(limit):
            claimed = self.claim()
            if claimed is None:
                break
            self.run(claimed)
            ran.append(claimed.backtest.backtest_id)
        return ran

    @property
    def enabled(self) -> bool:
        """Whether backtests can run here (a model catalog and a digest key are configured)."""
        return self._setup is not None

    def claim(self) -> "ClaimedBacktest | None":
        """Claim the next queued backtest (or one a dead worker left past its deadline), or None.

        Reads and writes the database only: a caller may claim on one thread and :meth:`run`
        on another.
        """
        claimed = self._claim()
        return None if claimed is None else ClaimedBacktest(*claimed)

    def run(self, claimed: "ClaimedBacktest") -> None:
        """Replay a claimed backtest's cases until done or its deadline, and finish it."""
        self._run(claimed.backtest, claimed.request)

    def _claim(self) -> tuple[Backtest, BacktestRequest | None] | None:
        if self._setup is None:
            return None
        now = self._clock.now()
        limits = self._setup.limits
        with self._uow() as uow:
            found = uow.backtests.claim(now - timedelta(seconds=limits.takeover_seconds))
            if found is None:
                return None
            backtest, sealed = found
            if backtest.status is BacktestStatus.QUEUED:
                backtest = attrs.evolve(
                    backtest,
                    status=BacktestStatus.RUNNING,
                    started_at=now,
                    deadline_at=now + timedelta(seconds=limits.deadline_seconds),
                )
            backtest = attrs.evolve(backtest, claims=backtest.claims + 1)
            uow.backtests.save(backtest)
            uow.commit()
        log.info(
            "backtest started",
            extra={"tenant_id": backtest.tenant_id, "backtest_id": backtest.backtest_id},
        )
        return backtest, self._open(sealed)

    def _open(self, sealed: SealedInputs | None) -> BacktestRequest | None:
        assert self._setup is not None  # noqa: S101 - claims need a setup
        plain = None if sealed is None else self._setup.keys.open(sealed)
        return None if plain is None else structure(json.loads(plain), BacktestRequest)

    def _run(self, backtest: Backtest, request: BacktestRequest | None) -> None:
        assert self._setup is not None  # noqa: S101 - claims need a setup
        assert backtest.deadline_at is not None  # noqa: S101 - set by the claim
        done = {case.case_index: case for case in backtest.evaluation_evidence.cases}
        skip = request is None or bool(backtest.preflight_abstain_reasons)
        limits = self._setup.limits
        with calls_until(
            self._setup.provider,
            self._clock,
            timeout_seconds=limits.call_timeout_seconds,
            deadline=backtest.deadline_at,
        ) as calls:
            for index in range(backtest.case_count):
                if index in done:
                    continue
                outcome = not_run(index) if skip else run_case(calls, request, index)  # type: ignore[arg-type]
                done[index] = outcome
                if not self._progress(backtest, tuple(done.values())):
                    return  # taken over by another worker
        self._finish(backtest, tuple(done[i] for i in range(backtest.case_count)))

    def _progress(self, backtest: Backtest, cases: tuple[CaseOutcome, ...]) -> bool:
        with self._uow() as uow:
            stored = uow.backtests.get(backtest.tenant_id, backtest.backtest_id, lock=True)
            if stored is None or stored.claims != backtest.claims:
                return False
            evidence = attrs.evolve(stored.evaluation_evidence, cases=cases)
            uow.backtests.save(attrs.evolve(stored, evaluation_evidence=evidence))
            uow.commit()
        return True

    def _finish(self, backtest: Backtest, cases: tuple[CaseOutcome, ...]) -> None:
        result = decide(cases, backtest.min_success_rate, backtest.preflight_abstain_reasons)
        used = result.provider_calls
        metering = attrs.evolve(
            backtest.metering,
            calls_used=used,
            calls_returned=backtest.metering.calls_reserved - used,
            backtests_used=1 if used else 0,
        )
        with self._uow() as uow:
            stored = uow.backtests.get(backtest.tenant_id, backtest.backtest_id, lock=True)
            if stored is None or stored.claims != backtest.claims:
                return
            if self._entitlements is not None and metering.period_start is not None:
                reservation = Reservation(
                    tenant_id=backtest.tenant_id,
                    period_start=metering.period_start,
                    units=backtest_units(backtest.case_count),
                )
                self._entitlements.commit(
                    uow,
                    reservation,
                    {
                        Meter.HOSTED_BACKTESTS: metering.backtests_used or 0,
                        Meter.PROVIDER_CALL_CREDITS: used,
                    },
                )
            finished = attrs.evolve(
                stored,
                status=BacktestStatus.FINISHED,
                finished_at=self._clock.now(),
                evaluation_evidence=attrs.evolve(stored.evaluation_evidence, cases=cases),
                metering=metering,
                result=result,
            )
            uow.backtests.save(finished)
            uow.backtests.drop_inputs(backtest.backtest_id)
            uow.commit()
        log.info(
            "backtest finished",
            extra={
                "tenant_id": backtest.tenant_id,
                "backtest_id": backtest.backtest_id,
                "verdict": result.verdict.value,
                "calls_used": used,
                "calls_returned": metering.calls_returned,
            },
        )


__all__ = ["BacktestService"]
