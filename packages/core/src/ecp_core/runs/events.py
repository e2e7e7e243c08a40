"""Run-lifecycle events, queued in the same transaction as the state change that causes them."""

from typing import Any

from ecp_core.approvals.model import ApprovalRecord
from ecp_core.ports.runs import RunsUnit
from ecp_core.runs.model import Run
from ecp_core.types import RunPublicStatus
from ecp_core.webhooks.model import WebhookEventType as E
from ecp_core.webhooks.service import WebhookService
from ecp_core.wire import unstructure

_ENDINGS = {
    RunPublicStatus.COMPLETED: E.RUN_COMPLETED,
    RunPublicStatus.FAILED: E.RUN_FAILED,
    RunPublicStatus.TERMINATED_BY_POLICY: E.RUN_TERMINATED_BY_POLICY,
}


def run_data(run: Run) -> dict[str, Any]:
    """What every run event tells about the run."""
    return {
        "run_id": run.run_id,
        "status": run.public_status.value,
        "graph_version_ref": run.graph_version_ref,
        "thread_id": run.thread_id,
        "failure_state": unstructure(run.failure_state),
    }


class LifecycleEvents:
    """The run engine's and the approval service's hooks into the webhook outbox."""

    def __init__(self, webhooks: WebhookService) -> None:
        """Queue through ``webhooks``."""
        self._webhooks = webhooks

    def _emit(self, uow: RunsUnit, event: E, run: Run, **extra: Any) -> None:  # noqa: ANN401
        self._webhooks.emit_in(
            uow, event, run.deployment_ref, run.tenant_id, {**run_data(run), **extra}
        )

    def run_started(self, uow: RunsUnit, run: Run) -> None:
        """A run left PENDING."""
        self._emit(uow, E.RUN_STARTED, run)

    def waiting_approval(self, uow: RunsUnit, run: Run, approval: ApprovalRecord) -> None:
        """A run paused for a new approval."""
        self._emit(
            uow,
            E.APPROVAL_REQUESTED,
            run,
            approval_id=approval.approval_id,
            node_id=approval.node_id,
        )
        self._emit(uow, E.RUN_WAITING_APPROVAL, run, approval_id=approval.approval_id)

    def approval_resolved(self, uow: RunsUnit, run: Run, approval: ApprovalRecord) -> None:
        """A reviewer resolved an approval."""
        decision = approval.resolution.decision.value if approval.resolution is not None else None
        self._emit(
            uow, E.APPROVAL_RESOLVED, run, approval_id=approval.approval_id, decision=decision
        )

    def run_ended(self, uow: RunsUnit, run: Run) -> None:
        """A run completed, failed or was terminated by policy."""
        event = _ENDINGS.get(run.public_status)
        if event is not None:
            self._emit(uow, event, run)
