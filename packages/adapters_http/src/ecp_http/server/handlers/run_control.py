"""Run control: cancel, pause, unpause and move runs; pause deployments (ADRs 0074, 0076, 0090)."""

from ecp_core.deployments.model import Deployment
from ecp_core.permissions import Permission
from ecp_core.runs.run.migration import (
    MigrateRunRequest,
    MigrateVersionRequest,
    MigrateVersionResponse,
)
from ecp_core.runs.run.model import CancelRunRequest, PauseRequest, RunStatusResponse
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "runs"


def cancel_run(call: Call, services: Services) -> RunStatusResponse:
    """Cancel a run and the runs it started; a canceled run is answered as it is (ADR 0074)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    request: CancelRunRequest = call.body
    return RunStatusResponse.of(services.ecp.runs.cancel(call.actor, call.path["run_id"], request))


def pause_run(call: Call, services: Services) -> RunStatusResponse:
    """Pause a run's dispatch; it keeps whatever it waits for."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    run = services.ecp.runs.pause(call.actor, call.path["run_id"], call.body)
    return RunStatusResponse.of(run)


def unpause_run(call: Call, services: Services) -> RunStatusResponse:
    """Lift a run's own pause; the dispatcher is woken."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    run = services.ecp.runs.unpause(call.actor, call.path["run_id"], call.body)
    services.background.wake()
    return RunStatusResponse.of(run)


def pause_deployment(call: Call, services: Services) -> Deployment:
    """Pause a deployment: it queues new runs and dispatches none of its runs."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.runs.pause_deployment(call.actor, call.path["ref"], call.body)


def unpause_deployment(call: Call, services: Services) -> Deployment:
    """Unpause a deployment; its runs are dispatched again, oldest first."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    deployment = services.ecp.runs.unpause_deployment(call.actor, call.path["ref"], call.body)
    services.background.wake()
    return deployment


def migrate_run(call: Call, services: Services) -> RunStatusResponse:
    """Move a waiting run to another version of its graph (ADR 0090)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    request: MigrateRunRequest = call.body
    return RunStatusResponse.of(services.ecp.runs.migrate(call.actor, call.path["run_id"], request))


def migrate_runs(call: Call, services: Services) -> MigrateVersionResponse:
    """Move a page of one version's waiting runs to another version, each on its own."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.runs.migrate_version(call.actor, call.body)


_KEEPS_WAITING = (
    " A run waiting for a person or a worker keeps waiting (its approval can be resolved, its "
    "task completed) and shows `paused` once it would run again."
)

OPERATIONS = [
    Operation(
        method="POST",
        path="/runs/{run_id}/cancel",
        handler=cancel_run,
        operation_id="runs_cancel",
        tag=TAG,
        summary="Cancel a run and every run it started that has not ended: each ends `canceled` "
        "with an audit record naming who and why, its pending approvals are withdrawn and its "
        "open tasks too. A canceled run is answered as it is; a run that ended otherwise is 409 "
        "`run_finished`",
        permission=Permission.RUN_CONTROL,
        body=CancelRunRequest,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/runs/{run_id}/migrate",
        handler=migrate_run,
        operation_id="runs_migrate",
        tag=TAG,
        summary="Move a run waiting for an approval, an interrupt, a task or a timer to another "
        "version of its graph, where the node it waits at exists (under its id, or the id "
        "`node_map` gives it) with the same kind. The run keeps its state and what it waits for, "
        "and goes on in the new version; one `migrated` audit record. Otherwise 422 "
        "`migration_not_possible` saying why, and nothing changes",
        permission=Permission.RUN_CONTROL,
        body=MigrateRunRequest,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/v1/runs/migrate",
        handler=migrate_runs,
        operation_id="runs_migrate_version",
        tag=TAG,
        summary="Move the waiting runs of one version to another version of the same graph, up to "
        "`limit` of them newest first: each moves or is refused as `POST /runs/{run_id}/migrate` "
        "would, and the answer gives each run's outcome and the cursor of the next page",
        permission=Permission.RUN_CONTROL,
        body=MigrateVersionRequest,
        response=MigrateVersionResponse,
    ),
    Operation(
        method="POST",
        path="/runs/{run_id}/pause",
        handler=pause_run,
        operation_id="runs_pause",
        tag=TAG,
        summary="Pause a run: no node of it is attempted until it is unpaused." + _KEEPS_WAITING,
        permission=Permission.RUN_CONTROL,
        body=PauseRequest,
        optional_body=True,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/runs/{run_id}/unpause",
        handler=unpause_run,
        operation_id="runs_unpause",
        tag=TAG,
        summary="Unpause a run (its own pause; a paused deployment keeps its runs paused)",
        permission=Permission.RUN_CONTROL,
        body=PauseRequest,
        optional_body=True,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/v1/deployments/{ref}/pause",
        handler=pause_deployment,
        operation_id="graphs_pause_deployment",
        tag="graphs",
        summary="Pause a deployment: it accepts and queues new runs (`paused`) and dispatches none "
        "of its runs." + _KEEPS_WAITING,
        permission=Permission.RUN_CONTROL,
        body=PauseRequest,
        optional_body=True,
        response=Deployment,
    ),
    Operation(
        method="POST",
        path="/v1/deployments/{ref}/unpause",
        handler=unpause_deployment,
        operation_id="graphs_unpause_deployment",
        tag="graphs",
        summary="Unpause a deployment: its runs are dispatched again, oldest first (a run paused "
        "on its own stays paused)",
        permission=Permission.RUN_CONTROL,
        body=PauseRequest,
        optional_body=True,
        response=Deployment,
    ),
]
