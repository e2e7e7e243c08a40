"""A failed dispatch counted against its run: backoff, and at the last attempt the run's end.

The dispatcher (``RunService.advance_next``) hands a claim whose attempt raised to
:meth:`DispatchFailures.count`; the run backs off, or at the last attempt ends FAILED with
``dispatch_error``, its record and ``run.failed`` (ADR 0019). Neither reads the run's state.
"""

from datetime import datetime

from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock
from ecp_core.runs.engine.dispatch import dispatch_backoff
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.engine.step import Stepper
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import DISPATCH_ERROR, Run, RunClaim
from ecp_core.types import AttemptStatus, RunStatus
from ecp_core.webhooks.schedule import RetrySchedule


class DispatchFailures:
    """Counts failed dispatches and ends the runs whose dispatch keeps failing."""

    def __init__(
        self, clock: Clock, stepper: Stepper, lifecycle: RunLifecycle, dispatch: RetrySchedule
    ) -> None:
        """``dispatch`` bounds and spaces the retries; ``stepper`` and ``lifecycle`` end a run."""
        self._clock = clock
        self._stepper = stepper
        self._lifecycle = lifecycle
        self._dispatch = dispatch

    def not_before(self, claim: RunClaim) -> datetime:
        """When a run may be dispatched again after this claim's failure."""
        failures = claim.dispatch_failures + 1
        return self._clock.now() + dispatch_backoff(self._dispatch, failures)

    def count(self, uow: RunsUnit, claim: RunClaim, exc: Exception) -> Run | None:
        """Count the failure and back off; at the last attempt, end the run. Commits.

        Neither reads the run's state: the count touches only dispatch bookkeeping, and the end
        works on the run's header.
        """
        failures = uow.runs.record_dispatch_failure(
            claim.tenant_id, claim.run_id, self.not_before(claim)
        )
        run = uow.runs.lock_header(claim.tenant_id, claim.run_id)
        if (
            run is not None
            and failures >= self._dispatch.max_attempts
            and run.status in (RunStatus.PENDING, RunStatus.RUNNING)
        ):
            run = self._end(uow, run, exc, failures)
        uow.commit()
        return run

    def _end(self, uow: RunsUnit, run: Run, exc: Exception, failures: int) -> Run:
        """End ``run`` (a header) FAILED with ``dispatch_error``, its record and ``run.failed``.

        Nothing of the run's state goes into the failure, the record or the event: only the
        error's type and the count.
        """
        error = type(exc).__name__
        message = f"dispatch raised {error} on {failures} attempts in a row"
        record = AttemptRecord(
            node_id=run.next_node_id or "",
            status=AttemptStatus.FAILED,
            execution_metadata={"dispatch_attempts": failures},
            error={"type": error, "message": message},
        )
        failed = self._lifecycle.apply(
            uow, self._stepper.fail(run, record, DISPATCH_ERROR, message)
        )
        uow.runs.save_header(failed)
        return failed


__all__ = ["DispatchFailures"]
