"""Applies a run's steps inside a unit of work: the one place a step's effects touch storage.

A node attempt's state change, its audit record, its approvals and its events commit together
because the caller applies the whole step in one unit of work and commits once.
"""

import attrs

from ecp_core.ports.runs import RunsUnit
from ecp_core.runs.audit_writer import AuditWriter
from ecp_core.runs.effects import (
    NoteApprovalAction,
    OfferTask,
    OpenApproval,
    SaveApproval,
    Step,
    WriteAudit,
)
from ecp_core.runs.events import EmitEvent
from ecp_core.runs.model import Run
from ecp_core.webhooks.service import WebhookService


class RunLifecycle:
    """Writes what a :class:`~ecp_core.runs.step.Step` decided, in the step's order."""

    def __init__(self, writer: AuditWriter, webhooks: WebhookService | None) -> None:
        """Seal attempts with ``writer``; queue events through ``webhooks`` (None: no events)."""
        self._writer = writer
        self._webhooks = webhooks

    def apply(self, uow: RunsUnit, step: Step) -> Run:
        """Apply ``step``'s effects; return its run with the attempt count the chain now has.

        The caller saves the run and commits.
        """
        run = step.run
        for effect in step.effects:
            match effect:
                case WriteAudit(attempt):
                    run = attrs.evolve(run, attempts=self._writer.write(uow, run, attempt))
                case OpenApproval(approval):
                    uow.approvals.add(approval)
                case SaveApproval(approval):
                    uow.approvals.save(approval)
                case NoteApprovalAction(action):
                    uow.approvals.add_action(action)
                case OfferTask(task):
                    uow.tasks.offer(task)
                case EmitEvent() if self._webhooks is not None:
                    self._webhooks.emit_in(
                        uow,
                        effect.event,
                        effect.run.deployment_ref,
                        effect.run.tenant_id,
                        effect.payload_data(),
                    )
        return run


__all__ = ["RunLifecycle"]
