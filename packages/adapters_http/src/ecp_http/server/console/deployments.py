"""Deployments and graphs in the console: the list, one deployment, one graph's versions (ADR 0083).

Reading needs ``graph_read`` (as ``GET /v1/deployments``); pausing and unpausing a deployment
``run_control`` (as ``POST /v1/deployments/{ref}/pause``), through the same core services. The
list reads a page of deployments and their policies in one read each, whatever the rows; a
deployment's page draws the graph version it runs (:mod:`.drawing`) and lists the graph's
versions, each of which ``/console/graphs/{graph_id}?version=N`` draws.
"""

from collections.abc import Collection
from typing import Any

from starlette.responses import Response

from ecp_core.deployments import Deployment
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.graphs.definition import GraphDefinition, GraphVersion
from ecp_core.permissions import Permission
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.runs.run.model import PauseRequest
from ecp_http.server.console.browser import Visit, redirect, signed_in
from ecp_http.server.console.drawing import DENIED, PLAIN, Drawing, draw_graph, drawable
from ecp_http.server.console.views import graph_rows, when
from ecp_http.wire.models import ConsoleDeploymentsQuery, ConsoleGraphQuery

DEPLOYMENTS_PAGE = 25
"""Deployments per page of the list."""
VERSIONS_PAGE = 25
"""Graph versions per page of a graph's versions."""
MAX_REASON = 500
"""The longest pause reason a form takes (the API's limit)."""


def limit_text(limit: int | None) -> str:
    """A concurrency limit in words."""
    return "no limit" if limit is None else f"{limit} at once"


def policy_text(policy: DeploymentPolicy | None) -> str:
    """What a deployment's policy denies, in a line."""
    if policy is None:
        return "no policy"
    if not policy.deny_capabilities:
        return f"denies nothing (v{policy.policy_version})"
    denied = ", ".join(capability.value for capability in policy.deny_capabilities)
    return f"denies {denied} (v{policy.policy_version})"


def deployment_row(deployment: Deployment, policy: DeploymentPolicy | None) -> dict[str, Any]:
    """What the list and the deployment page show of ``deployment``."""
    return {
        "ref": deployment.deployment_ref,
        "graph_id": deployment.graph_id,
        "graph_version": deployment.graph_version,
        "graph_version_ref": deployment.graph_version_ref,
        "paused": deployment.paused,
        "limit": limit_text(deployment.max_concurrent_runs),
        "policy": policy_text(policy),
        "denied": [] if policy is None else [c.value for c in policy.deny_capabilities],
        "policy_version": None if policy is None else policy.policy_version,
        "policy_updated": None if policy is None else when(policy.updated_at),
        "created_at": when(deployment.created_at),
    }


def version_row(version: GraphVersion, shown: int | None, deployed: int | None) -> dict[str, Any]:
    """A row of a graph's versions: number, digest, date, size, and whether shown or deployed."""
    return {
        "version": version.version,
        "digest": version.digest,
        "short_digest": version.digest.removeprefix("sha256:")[:12],
        "created_at": when(version.created_at),
        "nodes": len(version.definition.nodes),
        "edges": len(version.definition.edges),
        "shown": version.version == shown,
        "deployed": version.version == deployed,
    }


def drawn(graph: GraphDefinition, rows: list[dict[str, Any]], key: str) -> Drawing | None:
    """``graph`` drawn with no run (``rows``: :func:`plain_rows`), unless it is too large."""
    return draw_graph(graph, rows, key=key) if drawable(graph) else None


def plain_rows(graph: GraphDefinition, stopped: Collection[str] = ()) -> list[dict[str, Any]]:
    """The graph's nodes from its entry, with no run: plain, or denied when the policy stops it."""
    return [
        {**row, "state": DENIED if row["node_id"] in stopped else PLAIN}
        for row in graph_rows(graph, (), None)
    ]


def denied_nodes(graph: GraphDefinition, policy: DeploymentPolicy | None) -> list[dict[str, Any]]:
    """The nodes that declare a capability the policy denies (their runs fail there)."""
    if policy is None:
        return []
    denied = set(policy.deny_capabilities)
    return [
        {"node_id": node.id, "capabilities": [c.value for c in node.capabilities if c in denied]}
        for node in graph.nodes
        if denied.intersection(node.capabilities)
    ]


def _deployments(visit: Visit) -> Response:
    """The tenant's deployments by ref: graph version, pause, limit, policy, and their runs."""
    actor = visit.actor(Permission.GRAPH_READ)
    query: ConsoleDeploymentsQuery = visit.call.params or ConsoleDeploymentsQuery()
    registry = visit.services.ecp.graphs
    found, cursor = registry.deployments_page(
        actor.tenant_id, limit=DEPLOYMENTS_PAGE, cursor=query.cursor or None
    )
    policies = registry.policies_of(actor.tenant_id, [d.deployment_ref for d in found])
    return visit.page(
        "console_deployments.html",
        section="deployments",
        rows=[deployment_row(d, policies.get(d.deployment_ref)) for d in found],
        next_cursor=cursor,
        first_page=bool(query.cursor),
        may_read_runs=visit.may(Permission.RUN_READ),
    )


def _versions(
    visit: Visit, graph_id: str, cursor: str | None, shown: int | None, deployed: int | None
) -> tuple[list[dict[str, Any]], str | None]:
    found, next_cursor = visit.services.ecp.graphs.versions_page(
        visit.session.tenant_id, graph_id, limit=VERSIONS_PAGE, cursor=cursor
    )
    return [version_row(v, shown, deployed) for v in found], next_cursor


def _deployment(visit: Visit) -> Response:
    """One deployment: the version it runs drawn, its policy, pause and limit, the versions."""
    actor = visit.actor(Permission.GRAPH_READ)
    registry = visit.services.ecp.graphs
    deployment = registry.deployment(actor.tenant_id, visit.call.path["ref"])
    policy = registry.policy(actor.tenant_id, deployment.deployment_ref)
    version = registry.version(actor.tenant_id, deployment.graph_id, deployment.graph_version)
    versions, more = _versions(
        visit, deployment.graph_id, None, deployment.graph_version, deployment.graph_version
    )
    ref = deployment.deployment_ref
    stopped = denied_nodes(version.definition, policy)
    nodes = plain_rows(version.definition, {node["node_id"] for node in stopped})
    return visit.page(
        "console_deployment.html",
        section="deployments",
        deployment=deployment_row(deployment, policy),
        shown=version_row(version, deployment.graph_version, deployment.graph_version),
        drawn=drawn(version.definition, nodes, "deployed-graph"),
        nodes=nodes,
        denied_nodes=stopped,
        versions=versions,
        more_versions=more is not None,
        may_control=visit.may(Permission.RUN_CONTROL),
        may_read_runs=visit.may(Permission.RUN_READ),
        csrf_pause=visit.csrf(f"pause:{ref}"),
    )


def _graph(visit: Visit) -> Response:
    """A graph's version drawn (the latest unless ``version`` names one), and its versions."""
    actor = visit.actor(Permission.GRAPH_READ)
    query: ConsoleGraphQuery = visit.call.params or ConsoleGraphQuery()
    graph_id = visit.call.path["graph_id"]
    version = visit.services.ecp.graphs.version(actor.tenant_id, graph_id, query.version)
    versions, more = _versions(visit, graph_id, query.cursor or None, version.version, None)
    nodes = plain_rows(version.definition)
    return visit.page(
        "console_graph.html",
        section="deployments",
        shown=version_row(version, version.version, None),
        graph_id=graph_id,
        drawn=drawn(version.definition, nodes, "graph-version"),
        nodes=nodes,
        max_steps=version.definition.max_steps,
        entry=version.definition.entry,
        versions=versions,
        next_cursor=more,
        first_page=bool(query.cursor),
    )


def _pause_request(visit: Visit) -> PauseRequest:
    """The form's reason (optional, at most 500 characters) as the API's pause body."""
    reason = visit.call.form.get("reason", "").strip()
    if len(reason) > MAX_REASON:
        msg = f"at most {MAX_REASON} characters"
        raise ValidationFailed(
            "the reason is too long", errors=[FieldError(loc=("reason",), msg=msg)]
        )
    return PauseRequest(reason=reason or None)


def _set_paused(visit: Visit, *, paused: bool) -> Response:
    """Pause or unpause the deployment, as ``POST /v1/deployments/{ref}/(un)pause`` does."""
    ref = visit.call.path["ref"]
    visit.check_form(f"pause:{ref}")
    actor = visit.actor(Permission.RUN_CONTROL)
    request = _pause_request(visit)
    runs = visit.services.ecp.runs
    if paused:
        deployment = runs.pause_deployment(actor, ref, request)
    else:
        deployment = runs.unpause_deployment(actor, ref, request)
        visit.services.background.wake()
    return redirect(f"/console/deployments/{deployment.deployment_ref}")


def _pause(visit: Visit) -> Response:
    """Pause the deployment: it queues new runs and dispatches none of its runs."""
    return _set_paused(visit, paused=True)


def _unpause(visit: Visit) -> Response:
    """Unpause the deployment: its runs are dispatched again, oldest first."""
    return _set_paused(visit, paused=False)


deployments = signed_in(_deployments)
deployment_page = signed_in(_deployment)
graph_page = signed_in(_graph)
pause = signed_in(_pause)
unpause = signed_in(_unpause)

__all__ = [
    "DEPLOYMENTS_PAGE",
    "VERSIONS_PAGE",
    "denied_nodes",
    "deployment_page",
    "deployment_row",
    "deployments",
    "drawn",
    "graph_page",
    "limit_text",
    "pause",
    "plain_rows",
    "policy_text",
    "unpause",
    "version_row",
]
