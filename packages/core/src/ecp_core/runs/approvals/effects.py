"""What a move of a run asks of its approvals: open one, save one, note an action on one."""

import attrs

from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.run.effects import Effect


@attrs.frozen
class OpenApproval(Effect):
    """Store a new pending approval."""

    approval: ApprovalRecord


@attrs.frozen
class SaveApproval(Effect):
    """Replace a stored approval (resolved or escalated)."""

    approval: ApprovalRecord


@attrs.frozen
class NoteApprovalAction(Effect):
    """Append to an approval's action trail."""

    action: ApprovalActionRecord


__all__ = ["NoteApprovalAction", "OpenApproval", "SaveApproval"]
