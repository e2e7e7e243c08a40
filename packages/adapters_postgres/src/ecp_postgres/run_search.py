"""The conditions of a :class:`~ecp_core.runs.run.search.RunFilter` in SQL over ``ecp_runs``.

The twin of ``RunFilter.admits``; the conformance suite holds the two equal
(``RunRepositoryConformance.test_search_filters_and_pages_newest_first``).
"""

from ecp_core.runs.run.model import POLICY_VIOLATION
from ecp_core.runs.run.search import RunFilter
from ecp_core.runs.run.state_machine import WAITING
from ecp_core.types import RunPublicStatus

_UNPAUSED = "paused_by = '[]'::jsonb"
_POLICY = f"failure_state->>'reason' = '{POLICY_VIOLATION}'"
_BY_STATUS = {
    RunPublicStatus.PENDING: f"status = 'PENDING' AND {_UNPAUSED}",
    RunPublicStatus.RUNNING: f"status = 'RUNNING' AND {_UNPAUSED}",
    RunPublicStatus.PAUSED: f"status IN ('PENDING', 'RUNNING') AND NOT {_UNPAUSED}",
    RunPublicStatus.FAILED: f"status = 'FAILED' AND ({_POLICY}) IS NOT TRUE",
    RunPublicStatus.TERMINATED_BY_POLICY: (
        f"(status = 'TERMINATED_BY_POLICY' OR (status = 'FAILED' AND ({_POLICY}) IS TRUE))"
    ),
}
"""Public statuses that are not simply the stored status (``public_status``)."""
_WAITING = "status IN ({})".format(", ".join(f"'{status.value}'" for status in sorted(WAITING)))
"""The runs that wait for something (``RunFilter.waiting``)."""


def search_clauses(where: RunFilter) -> tuple[list[str], list[object]]:
    """The SQL conditions (with ``%s`` placeholders) of the filters ``where`` gives, and values."""
    clauses: list[str] = []
    values: list[object] = []
    if where.deployment_ref is not None:
        clauses.append("deployment_ref = %s")
        values.append(where.deployment_ref)
    if where.status is not None:
        found = _BY_STATUS.get(where.status)
        clauses.append(found or f"status = '{where.status.value.upper()}'")
    if where.created_from is not None:
        clauses.append("created_at >= %s")
        values.append(where.created_from)
    if where.created_to is not None:
        clauses.append("created_at < %s")
        values.append(where.created_to)
    if where.run_or_key is not None:
        clauses.append("(run_id = %s OR idempotency_key = %s)")
        values += [where.run_or_key, where.run_or_key]
    if where.graph_version_ref is not None:
        clauses.append("graph_version_ref = %s")
        values.append(where.graph_version_ref)
    if where.waiting:
        clauses.append(_WAITING)
    return clauses, values


__all__ = ["search_clauses"]
