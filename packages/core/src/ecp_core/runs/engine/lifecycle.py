"""Applies a run's steps inside a unit of work: the one place a step's effects touch storage.

A node attempt's state change, its audit record, its approvals and its events commit together
because the caller applies the whole step in one unit of work and commits once.
"""

import logging

from ecp_core.evolve import evolve
from ecp_core.ports.runs import RunsUnit
from ecp_core.registry.service import require_graph
from ecp_core.runs.approvals.effects import NoteApprovalAction, OpenApproval, SaveApproval
from ecp_core.runs.audit.writer import AuditWriter
from ecp_core.runs.children.steps import ChildSteps, awaits
from ecp_core.runs.run.effects import InAttempt, StartChild, Step, WriteAudit
from ecp_core.runs.run.events import ChildEnded, EmitEvent
from ecp_core.runs.run.model import Run
from ecp_core.runs.tasks.effects import OfferTask
from ecp_core.webhooks.service import WebhookService

log = logging.getLogger("ecp_core.runs")


def _approval_effect(
    uow: RunsUnit, effect: OpenApproval | SaveApproval | NoteApprovalAction
) -> None:
    """Open, save or note an approval in ``uow``."""
    match effect:
        case OpenApproval(approval):
            uow.approvals.add(approval)
        case SaveApproval(approval):
            uow.approvals.save(approval)
        case NoteApprovalAction(action):
            uow.approvals.add_action(action)


class RunLifecycle:
    """Writes what a :class:`~ecp_core.runs.engine.step.Step` decided, in the step's order."""

    def __init__(
        self,
        writer: AuditWriter,
        webhooks: WebhookService | None,
        children: ChildSteps | None = None,
    ) -> None:
        """Seal attempts with ``writer``; queue events through ``webhooks`` (None: no events).

        ``children`` decides what a child run's end does to its waiting parent (None: nothing).
        """
        self._writer = writer
        self._webhooks = webhooks
        self._children = children

    def apply(self, uow: RunsUnit, step: Step) -> Run:
        """Apply ``step``'s effects; return its run with the attempt count the chain now has.

        The caller saves the run and commits.
        """
        run = step.run
        attempts = None  # the chain's length after the step's last record (the writer reads
        for effect in step.effects:  # none of the run's counts, so the run is evolved once)
            match effect:
                case WriteAudit(attempt):
                    attempts = self._writer.write(uow, run, attempt)
                case OpenApproval() | SaveApproval() | NoteApprovalAction():
                    _approval_effect(uow, effect)
                case OfferTask(task):
                    uow.tasks.offer(task)
                case StartChild(child):
                    uow.runs.add(child)
                case InAttempt(write):
                    write(uow)
                case ChildEnded(child) if self._children is not None:
                    self._continue_parent(uow, child, self._children)
                case EmitEvent() if self._webhooks is not None:
                    self._webhooks.emit_in(
                        uow,
                        effect.event,
                        effect.run.deployment_ref,
                        effect.run.tenant_id,
                        effect.payload_data(),
                    )
        return run if attempts is None else evolve(run, attempts=attempts)

    def _continue_parent(self, uow: RunsUnit, child: Run, children: ChildSteps) -> None:
        """Record ``child``'s end in its waiting parent (locked) and save the parent.

        The parent's status is checked under its row lock, so a child's end is recorded once;
        a parent that no longer waits is left alone. A parent that ends tells its own parent.
        """
        assert child.parent_run_id is not None  # noqa: S101 - only child runs send ChildEnded
        parent = uow.runs.lock(child.tenant_id, child.parent_run_id)
        facts = {"run_id": child.run_id, "parent_run_id": child.parent_run_id}
        if parent is None or not awaits(parent, child):
            log.warning("child run ended but its parent no longer waits for it", extra=facts)
            return
        graph = require_graph(uow, parent.tenant_id, parent.graph_version_ref)
        parent = self.apply(uow, children.ended(parent, graph, child))
        uow.runs.save(parent)
        log.info("child run ended", extra={**facts, "status": child.public_status.value})


__all__ = ["RunLifecycle"]
