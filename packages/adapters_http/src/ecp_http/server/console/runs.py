"""The run list and the run page (ADR 0082).

The list shows the tenant's runs newest first, filtered by deployment, public status, start time
and a run id or idempotency key, one keyset page per request read in one statement
(``RunService.search``). The run page shows what the API's run read shows, the graph with the
path taken, the timeline, and what else the person's role may read: pending approvals
(``approval_read``), its tasks and their workers (``task_read``), Verify (``audit_read``), and the control forms (``run_control``,
:mod:`.run_control`). Reading a run needs ``run_read``, as ``GET /runs/{id}`` does.
"""

from typing import Any

from starlette.responses import Response

from ecp_core.permissions import Permission
from ecp_core.runs.run.model import Run
from ecp_core.types import ApprovalStatus, RunPublicStatus
from ecp_http.server.console.browser import Visit, signed_in
from ecp_http.server.console.drawing import draw_graph
from ecp_http.server.console.run_views import (
    RUNS_PAGE,
    STATUSES,
    filter_fields,
    run_filter,
    run_payloads,
    run_row,
    task_row,
)
from ecp_http.server.console.views import graph_rows, timeline_rows, when
from ecp_http.wire.models import ConsoleRunsQuery

CHILDREN_SHOWN = 25
"""Child runs listed on a run's page (the first ones, oldest first)."""


def _runs(visit: Visit) -> Response:
    """The tenant's runs, newest first, filtered; a keyset page per request."""
    actor = visit.actor(Permission.RUN_READ)
    query: ConsoleRunsQuery = visit.call.params or ConsoleRunsQuery()
    where = run_filter(query)
    found, cursor = visit.services.ecp.runs.search(
        actor.tenant_id, where, limit=RUNS_PAGE, cursor=query.cursor or None
    )
    kept = filter_fields(query)
    return visit.page(
        "console_runs.html",
        section="runs",
        rows=[run_row(run) for run in found],
        query=kept,
        filtered=bool(kept),
        statuses=STATUSES,
        next_cursor=cursor,
        first_page=query.cursor is not None,
    )


def _waiting_at(run: Run) -> str | None:
    """The node the run waits at for a person, if it does."""
    if run.public_status is RunPublicStatus.WAITING_APPROVAL and run.paused is not None:
        return run.paused.node_id
    return None


def run_context(visit: Visit, run: Run) -> dict[str, Any]:
    """What the run page shows of ``run`` to this person, and which forms it offers."""
    services, tenant = visit.services, visit.session.tenant_id
    timeline = services.ecp.audit.timeline(tenant, run.run_id).entries
    definition = services.ecp.graphs.definition(tenant, run.graph_version_ref)
    approvals = []
    if visit.may(Permission.APPROVAL_READ):
        pending = services.ecp.approvals.for_run(tenant, run.run_id, ApprovalStatus.PENDING)
        approvals = [
            {
                "approval_id": found.approval_id,
                "summary": found.summary,
                "node_id": found.node_id,
                "sla": when(found.sla_deadline) if found.sla_deadline else None,
            }
            for found in pending
        ]
    tasks = []
    if visit.may(Permission.TASK_READ):
        tasks = [task_row(task) for task in services.ecp.tasks.for_run(tenant, run.run_id)]
    children, more_children = services.ecp.runs.children(tenant, run.run_id, limit=CHILDREN_SHOWN)
    graph = graph_rows(definition, timeline, _waiting_at(run))
    row = run_row(run)
    control = visit.may(Permission.RUN_CONTROL) and not row["ended"]
    form = f"run-control:{run.run_id}"
    return {
        "section": "runs",
        "run": row,
        "payloads": run_payloads(run),
        "graph": graph,
        "drawn": draw_graph(definition, graph, key="run-graph"),
        "timeline": timeline_rows(timeline),
        "approvals": approvals,
        "reads_approvals": visit.may(Permission.APPROVAL_READ),
        "tasks": tasks,
        "children": [run_row(child) for child in children],
        "more_children": more_children is not None,
        "may_verify": visit.may(Permission.AUDIT_READ),
        "may_control": control,
        "own_pause": "run" in row["paused_by"],
        "csrf_control": visit.csrf(form) if control else "",
    }


def _run(visit: Visit) -> Response:
    """One run: its header, graph, timeline, payloads, approvals, children and the controls."""
    visit.actor(Permission.RUN_READ)
    run = visit.services.ecp.runs.get(visit.session.tenant_id, visit.call.path["run_id"])
    return visit.page("console_run.html", **run_context(visit, run))


def _verify(visit: Visit) -> Response:
    """Verify the run's audit chain and signatures, as ``GET /runs/{id}/audit/verify`` does."""
    actor = visit.actor(Permission.AUDIT_READ)
    run = visit.services.ecp.runs.get(actor.tenant_id, visit.call.path["run_id"])
    result = visit.services.ecp.audit.verify_run(actor.tenant_id, run.run_id)
    return visit.page("console_run_verify.html", section="runs", run=run_row(run), result=result)


runs_page = signed_in(_runs)
run_page = signed_in(_run)
verify_page = signed_in(_verify)

__all__ = ["run_context", "run_page", "runs_page", "verify_page"]
