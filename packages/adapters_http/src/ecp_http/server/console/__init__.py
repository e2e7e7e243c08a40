"""The console: server-rendered pages for approvers under ``/console`` (ADR 0080).

Every page and form works without JavaScript; every response carries the console's
Content-Security-Policy (:data:`~ecp_http.server.console.browser.CONSOLE_CSP`). A person signs in
once with an API key or a JWT (:mod:`.sign_in`); the sealed session
(:mod:`ecp_http.server.console_sessions`) acts with
exactly that credential's tenant and roles, checked against the API's one permission table on
every request (:mod:`.browser`). The inbox and the approval page are :mod:`.approvals`.
"""

from collections.abc import Callable

from starlette.responses import Response

from ecp_http.server.console import (
    approvals,
    audit,
    deployments,
    economics,
    live,
    sign_in,
    tasks,
    webhooks,
)
from ecp_http.server.console.browser import DRAWING_SCRIPT, STYLESHEET
from ecp_http.server.console_sessions import CONSOLE_PATH, SIGN_IN_PATH
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.models import (
    ConsoleAuditQuery,
    ConsoleDeploymentsQuery,
    ConsoleEconomicsQuery,
    ConsoleGraphQuery,
    ConsoleInboxQuery,
    ConsoleTasksQuery,
    ConsoleWebhooksQuery,
)

TAG = "console"


def _page(
    method: str,
    path: str,
    handler: Callable[[Call, Services], Response],
    operation_id: str,
    summary: str,
    *,
    statuses: tuple[int, ...] = (303, 403, 404, 409, 422),
    query: type | None = None,
    media_type: str = "text/html",
) -> Operation:
    return Operation(
        method=method,
        path=path,
        handler=handler,
        operation_id=operation_id,
        tag=TAG,
        summary=summary,
        permission=None,
        public=True,  # the console session is checked by the page itself
        response=str,
        media_type=media_type,
        form=method == "POST",
        query=query,
        extra_statuses=statuses,
    )


OPERATIONS = [
    _page("GET", CONSOLE_PATH, sign_in.home, "console_home", "The console: on to the inbox"),
    _page(
        "GET",
        SIGN_IN_PATH,
        sign_in.sign_in_page,
        "console_sign_in_form",
        "The console's sign-in form (an API key or a JWT)",
        statuses=(),
    ),
    _page(
        "POST",
        SIGN_IN_PATH,
        sign_in.sign_in,
        "console_sign_in",
        "Sign in to the console with an API key or a JWT; starts the sealed session cookie",
        statuses=(303, 401, 403),
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/sign-out",
        sign_in.sign_out,
        "console_sign_out",
        "End the console session",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/inbox",
        approvals.inbox,
        "console_inbox",
        "The pending approvals the person may resolve, soonest SLA first (HTML)",
        query=ConsoleInboxQuery,
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/approvals/{approval_id}",
        approvals.approval_page,
        "console_approval",
        "One approval: what is decided, who acted, the run's timeline, the decision forms (HTML)",
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/approvals/{approval_id}/edit",
        approvals.review_edit,
        "console_approval_review_edit",
        "The diff of an edited payload, to confirm before it resolves (HTML)",
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/approvals/{approval_id}/resolve",
        approvals.resolve,
        "console_approval_resolve",
        "Approve, reject or edit-then-approve from the browser (the form's action_digest "
        "must still match)",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/deployments",
        deployments.deployments,
        "console_deployments",
        "The tenant's deployments: graph version, pause, limit, policy (HTML)",
        query=ConsoleDeploymentsQuery,
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/deployments/{ref}",
        deployments.deployment_page,
        "console_deployment",
        "One deployment: its graph version drawn, policy, pause, limit, the graph's versions "
        "(HTML)",
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/deployments/{ref}/pause",
        deployments.pause,
        "console_deployment_pause",
        "Pause a deployment from the browser (as POST /v1/deployments/{ref}/pause)",
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/deployments/{ref}/unpause",
        deployments.unpause,
        "console_deployment_unpause",
        "Unpause a deployment from the browser (as POST /v1/deployments/{ref}/unpause)",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/graphs/{graph_id}",
        deployments.graph_page,
        "console_graph",
        "A graph's version drawn (the latest unless ?version=N) and its versions (HTML)",
        query=ConsoleGraphQuery,
    ),
    _page(
        "GET",
        DRAWING_SCRIPT,
        sign_in.drawing_script,
        "console_drawing_script",
        "The console's drawings' script: pan and zoom (an enhancement only)",
        statuses=(),
        media_type="text/javascript",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/tasks",
        tasks.tasks,
        "console_tasks",
        "Task queues by topic (waiting, locked, lock expired, oldest waiting), or one topic's "
        "tasks with ?topic= (HTML)",
        query=ConsoleTasksQuery,
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/webhooks",
        webhooks.webhooks,
        "console_webhooks",
        "Webhook endpoints with their recent health, dead letters and deliveries (HTML)",
        query=ConsoleWebhooksQuery,
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/webhooks/dead-letters/{delivery_id}/replay",
        webhooks.replay,
        "console_webhooks_replay",
        "Replay a dead letter from the browser (as the API's replay)",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/events",
        live.events,
        "console_events",
        "Live updates for the signed-in session: text/event-stream events approval and run "
        "(data: the id), resumable by Last-Event-ID",
        statuses=(204, 403, 429),
        media_type="text/event-stream",
    ),
    _page(
        "GET",
        live.SCRIPT,
        live.live_script,
        "console_live_script",
        "The console's live-update script (an enhancement: pages work without it)",
        statuses=(),
        media_type="text/javascript",
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/economics",
        economics.economics,
        "console_economics",
        "A workflow's cost and outcomes by version, time, step and cohort, and the version "
        "decisions with their intervals, as charts beside their tables (HTML)",
        query=ConsoleEconomicsQuery,
    ),
    _page(
        "GET",
        CONSOLE_PATH + "/audit",
        audit.audit_page,
        "console_audit",
        "Audit chain verification per deployment or run, and the transparency log's state (HTML)",
        query=ConsoleAuditQuery,
    ),
    _page(
        "POST",
        CONSOLE_PATH + "/audit/verify",
        audit.verify,
        "console_audit_verify",
        "Verify a deployment's or a run's audit chains and signatures from the browser (HTML)",
    ),
    _page(
        "GET",
        STYLESHEET,
        sign_in.console_stylesheet,
        "console_stylesheet",
        "The console's stylesheet",
        statuses=(),
        media_type="text/css",
    ),
]
"""The console's routes: served by every ECP server."""

__all__ = ["OPERATIONS"]
