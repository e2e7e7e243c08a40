"""Runs: start, read, resume, their children, and the admin run list (control: run_control)."""

import time

import attrs

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.runs.run.model import (
    AdminRunListResponse,
    ChildRunListResponse,
    ChildRunSummaryResponse,
    Run,
    RunStatusResponse,
    StartRunRequest,
)
from ecp_core.types import RunStatus
from ecp_core.wire import structure
from ecp_http.server.handlers.common import preferred_wait, settled
from ecp_http.server.long_poll import Poll
from ecp_http.server.routing import Call, HeaderParam, Operation, Reply, next_link
from ecp_http.server.services import Services
from ecp_http.wire.models import (
    PageQuery,
    ResumeRequest,
)

TAG = "runs"
PREFER = "Send `Prefer: wait=N` to answer once the run waits or ends, or after N seconds."


def with_idempotency_header(call: Call) -> StartRunRequest:
    """The body, with an ``Idempotency-Key`` header as its ``idempotency_key`` (they must agree)."""
    body: StartRunRequest = call.body
    key = call.headers.get("idempotency-key")
    if key is None or key == body.idempotency_key:
        return body
    if body.idempotency_key is not None:
        raise ValidationFailed(
            "the Idempotency-Key header and the body's idempotency_key differ",
            errors=[FieldError(loc=("header", "Idempotency-Key"), msg="differs from the body")],
        )
    fields = {"deployment_ref": body.deployment_ref, "idempotency_key": key}
    try:
        structure(fields, StartRunRequest, what="the request")
    except ValidationFailed as exc:
        raise ValidationFailed(
            "invalid Idempotency-Key header",
            errors=[FieldError(loc=("header", "Idempotency-Key"), msg=e.msg) for e in exc.errors],
        ) from None
    return attrs.evolve(body, idempotency_key=key)


def _settled(call: Call, services: Services, run: Run) -> RunStatusResponse | Poll:
    """``run``, once it waits or ends if ``Prefer: wait=N`` asks (at most ``ECP_MAX_WAIT_SECONDS``).

    ``run`` is as the handler's own transaction left it; when it still runs, the dispatcher is
    woken and the wait is a :class:`Poll` on the event loop, never in a worker thread. The watch
    starts before the wake, and the dispatcher's ring carries the run it moved, so the answer
    comes without reading the run again (ADR 0065).
    """
    runs, tenant, run_id = services.ecp.runs, call.tenant, run.run_id
    if settled(run):
        return RunStatusResponse.of(run)
    seconds = preferred_wait(call.headers, services.settings.max_wait_seconds)
    if seconds <= 0:
        services.background.wake(announced=True)
        return RunStatusResponse.of(run)
    watch = services.runs_moved.watch(run_id, seconds)
    services.background.wake(announced=True)  # the run's runnable notification calls a worker

    def again() -> RunStatusResponse | None:
        now = runs.get(tenant, run_id)
        return RunStatusResponse.of(now) if settled(now) else None

    return Poll(
        again=again,
        at_deadline=lambda: RunStatusResponse.of(runs.get(tenant, run_id)),
        deadline=time.monotonic() + seconds,
        bell=services.runs_moved,
        key=run_id,
        watch=watch,
        heard=lambda news: _heard(news, tenant),
    )


def _heard(news: object, tenant: str) -> RunStatusResponse | None:
    """The answer from the run the dispatcher rang with: when it is this tenant's and settled.

    A failed run is read again: the dispatcher's failure path hands back the run's header only.
    """
    if not isinstance(news, Run) or news.tenant_id != tenant or not settled(news):
        return None
    return None if news.status is RunStatus.FAILED else RunStatusResponse.of(news)


def start_run(call: Call, services: Services) -> Reply | Poll:
    """Start a run (201), or find the one its idempotency key started (200).

    With ``Prefer: wait`` a run worker starts it, and the run's first attempts that change
    nothing outside it commit with its creation (ADR 0099); a run that then waits or ends is
    answered at once, one that goes on is waited for as before.
    """
    started_by = None if call.actor is None else call.actor.subject
    request, runs, tenant = with_idempotency_header(call), services.ecp.runs, call.tenant
    seconds = preferred_wait(call.headers, services.settings.max_wait_seconds)
    handed = (
        services.background.start_by_worker(
            runs.starts.prepare(tenant, request, started_by=started_by), seconds
        )
        if seconds > 0
        else None
    )
    run, created = handed or runs.start(tenant, request, started_by=started_by)
    status = 201 if created else 200
    answer = _settled(call, services, run)
    if isinstance(answer, Poll):
        return attrs.evolve(answer, then=lambda body: Reply(body=body, status=status))
    return Reply(body=answer, status=status)


def get_run(call: Call, services: Services) -> RunStatusResponse:
    """A run."""
    return RunStatusResponse.of(services.ecp.runs.get(call.tenant, call.path["run_id"]))


def resume_run(call: Call, services: Services) -> RunStatusResponse | Poll:
    """Resume a run waiting at an interrupt with the value it waits for."""
    run = services.ecp.runs.resume(call.tenant, call.path["run_id"], call.body.value)
    return _settled(call, services, run)


def list_run_children(call: Call, services: Services) -> Reply:
    """A page of the child runs a run's subgraph nodes started, oldest first (ADR 0046)."""
    query: PageQuery = call.params
    run_id = call.path["run_id"]
    children, cursor = services.ecp.runs.children(
        call.tenant, run_id, limit=query.limit, cursor=query.cursor
    )
    body = ChildRunListResponse(
        children=tuple(ChildRunSummaryResponse.of(child) for child in children),
        next_cursor=cursor,
    )
    return Reply(body=body, headers=next_link(f"/runs/{run_id}/children", call.query, cursor))


def admin_list_runs(call: Call, services: Services) -> Reply:
    """A page of the tenant's runs, newest first."""
    query: PageQuery = call.params
    runs, total, cursor = services.ecp.runs.page(
        call.tenant, limit=query.limit, cursor=query.cursor
    )
    body = AdminRunListResponse(runs=tuple(RunStatusResponse.of(run) for run in runs), total=total)
    return Reply(body=body, headers=next_link("/admin/runs", call.query, cursor))


OPERATIONS = [
    Operation(
        method="POST",
        path="/runs",
        handler=start_run,
        operation_id="runs_start",
        tag=TAG,
        summary="Start a run. " + PREFER,
        permission=Permission.RUN_START,
        body=StartRunRequest,
        response=RunStatusResponse,
        status=201,
        extra_statuses=(200,),
        headers=(
            HeaderParam(
                name="Idempotency-Key",
                schema={"type": "string", "minLength": 1, "maxLength": 256},
                description="Means the same as the body's `idempotency_key` (they must agree).",
            ),
            HeaderParam(
                name="Prefer",
                schema={"type": "string"},
                description="`wait=N` (RFC 7240): answer once the run waits or ends, or after N s.",
            ),
        ),
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}",
        handler=get_run,
        operation_id="runs_get",
        tag=TAG,
        summary="Read a run",
        permission=Permission.RUN_READ,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/runs/{run_id}/resume",
        handler=resume_run,
        operation_id="runs_resume",
        tag=TAG,
        summary="Resume a run waiting at an interrupt. " + PREFER,
        permission=Permission.RUN_RESUME,
        body=ResumeRequest,
        response=RunStatusResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/children",
        handler=list_run_children,
        operation_id="runs_list_children",
        tag=TAG,
        summary="The child runs a run's subgraph nodes started, oldest first; the next page is "
        "in next_cursor and the Link header",
        permission=Permission.RUN_READ,
        response=ChildRunListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/admin/runs",
        handler=admin_list_runs,
        operation_id="admin_list_runs",
        tag="admin",
        summary="The tenant's runs, newest first; the next page is in the Link header",
        permission=Permission.RUN_LIST_ADMIN,
        response=AdminRunListResponse,
        query=PageQuery,
    ),
]
