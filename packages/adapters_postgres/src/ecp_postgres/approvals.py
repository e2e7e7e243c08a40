"""ApprovalRepository on PostgreSQL."""

from datetime import datetime

from ecp_core.errors import exists, missing
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.types import ApprovalStatus
from ecp_postgres.rows import Repository, Table
from ecp_postgres.session import PendingWrite

APPROVALS = Table(
    "ecp_approvals",
    ApprovalRecord,
    jsonb=[
        "allowed_actions",
        "proposed_payload",
        "context_excerpt",
        "urgency_metadata",
        "requested_by",
        "resolution",
        "approver_roles",
        "approver_subjects",
        "approvals",
    ],
    skip=["action_digest"],  # computed from the other fields
)
APPROVAL_ACTIONS = Table("ecp_approval_actions", ApprovalActionRecord, jsonb=["actor", "metadata"])


_ADMITS = (
    "((approver_roles IS NULL AND approver_subjects IS NULL)"
    " OR approver_subjects ? %s OR approver_roles ?| %s::text[])"
    " AND (NOT forbid_self_approval OR run_started_by IS DISTINCT FROM %s)"
)
"""The approvals whose approver lists admit a subject with some roles, and whose starter is not
that subject when they forbid self-approval (``ApprovalRecord.admits``)."""


def _key(approval: ApprovalRecord) -> tuple[str, str]:
    return ("approval", approval.approval_id)


def _insert(approval: ApprovalRecord) -> PendingWrite:
    return PendingWrite(
        APPROVALS.insert_sql(on_conflict_nothing=True),
        APPROVALS.params(approval),
        expected=1,
        error=lambda: exists("approval", approval.approval_id),
    )


class PostgresApprovals(Repository):
    """ApprovalRepository on PostgreSQL."""

    def add(self, approval: ApprovalRecord) -> None:
        """Store a new approval (the write waits in the unit of work's batch)."""
        self._write(_insert(approval), _key(approval))

    def get(self, tenant_id: str, approval_id: str) -> ApprovalRecord | None:
        """One approval of the tenant, or None."""
        return self._one(APPROVALS, "approval_id = %s AND tenant_id = %s", (approval_id, tenant_id))

    def save(self, approval: ApprovalRecord) -> None:
        """Replace a stored approval.

        One added in this transaction and not yet sent is added with the new values instead.
        """
        queued = self._pending(_key(approval))
        if queued is not None and queued.sql.startswith("INSERT"):
            self._write(_insert(approval), _key(approval))
            return
        self._write(
            PendingWrite(
                APPROVALS.update_sql("approval_id") + " AND tenant_id = %(tenant_id)s",
                APPROVALS.params(approval),
                expected=1,
                error=lambda: missing("approval", approval.approval_id),
            ),
            _key(approval),
        )

    def for_run(
        self, tenant_id: str, run_id: str, status: ApprovalStatus | None = None
    ) -> list[ApprovalRecord]:
        """A run's approvals in creation order."""
        if status is None:
            return self._all(
                APPROVALS,
                "WHERE tenant_id = %s AND run_id = %s ORDER BY created_at, approval_id",
                (tenant_id, run_id),
            )
        return self._all(
            APPROVALS,
            "WHERE tenant_id = %s AND run_id = %s AND status = %s ORDER BY created_at, approval_id",
            (tenant_id, run_id, status.value),
        )

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: str | None = None,
        status: ApprovalStatus | None = None,
        deployment_ref: str | None = None,
        run_id: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> list[ApprovalRecord]:
        """The tenant's approvals matching every filter, by id, after ``after``."""
        # Only the filters given enter the statement, so the planner picks the index that fits.
        given = {
            "approval_id > %s": after,
            "status = %s": None if status is None else status.value,
            "deployment_ref = %s": deployment_ref,
            "run_id = %s": run_id,
        }
        where = [
            "tenant_id = %s",
            *(clause for clause, value in given.items() if value is not None),
        ]
        values: list[object] = [value for value in given.values() if value is not None]
        if approver is not None:  # ApprovalRecord.admits, as a condition
            where.append(_ADMITS)
            values += [approver.subject, [role.value for role in approver.roles], approver.subject]
        return self._all(
            APPROVALS,
            f"WHERE {' AND '.join(where)} ORDER BY approval_id LIMIT %s",
            (tenant_id, *values, limit),
        )

    def pending_by_deadline(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: tuple[datetime | None, str] | None = None,
        deployment_ref: str | None = None,
        approver: ActorIdentity | None = None,
    ) -> list[ApprovalRecord]:
        """The tenant's pending approvals, soonest deadline first (none last), then by id."""
        where = ["tenant_id = %s", "status = 'pending'"]
        values: list[object] = [tenant_id]
        if deployment_ref is not None:
            where.append("deployment_ref = %s")
            values.append(deployment_ref)
        if approver is not None:  # ApprovalRecord.admits, as a condition
            where.append(_ADMITS)
            values += [approver.subject, [role.value for role in approver.roles], approver.subject]
        if after is not None and after[0] is None:  # past every deadline: the rest, by id
            where.append("sla_deadline IS NULL AND approval_id > %s")
            values.append(after[1])
        elif after is not None:
            where.append(
                "(sla_deadline IS NULL OR sla_deadline > %s"
                " OR (sla_deadline = %s AND approval_id > %s))"
            )
            values += [after[0], after[0], after[1]]
        return self._all(
            APPROVALS,
            f"WHERE {' AND '.join(where)} ORDER BY sla_deadline NULLS LAST, approval_id LIMIT %s",
            (*values, limit),
        )

    def overdue(self, now: datetime, limit: int) -> list[ApprovalRecord]:
        """Pending approvals past their deadline."""
        return self._all(
            APPROVALS,
            "WHERE status = 'pending' AND sla_deadline IS NOT NULL AND sla_deadline < %s ORDER BY sla_deadline, approval_id LIMIT %s",
            (now, limit),
        )

    def add_action(self, action: ApprovalActionRecord) -> None:
        """Append to the trail (the write waits in the unit of work's batch)."""
        self._write(PendingWrite(APPROVAL_ACTIONS.insert_sql(), APPROVAL_ACTIONS.params(action)))

    def actions(self, tenant_id: str, approval_id: str) -> list[ApprovalActionRecord]:
        """The trail in order."""
        return self._all(
            APPROVAL_ACTIONS,
            "WHERE tenant_id = %s AND approval_id = %s ORDER BY sequence",
            (tenant_id, approval_id),
        )
