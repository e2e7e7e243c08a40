"""Graphs, deployments, policies and contracts."""

from ecp_core.contracts.model import Contract, CreateContractRequest
from ecp_core.deployments import CreateDeploymentRequest, Deployment
from ecp_core.errors import NotFound
from ecp_core.graphs.definition import GraphDefinition, GraphRegistration, GraphVersion
from ecp_core.permissions import Permission
from ecp_core.policies.model import DeploymentPolicy, DeploymentPolicyRequest
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import (
    DeploymentListResponse,
    GraphListResponse,
    GraphVersionListResponse,
    GraphVersionQuery,
    PageQuery,
)

TAG = "graphs"


def register_graph(call: Call, services: Services) -> Reply:
    """Register a graph (201), or find the identical version registered before (200)."""
    registration = services.ecp.graphs.register(call.tenant, call.body)
    return Reply(body=registration, status=201 if registration.created else 200)


def get_graph(call: Call, services: Services) -> GraphVersion:
    """A graph version: the one asked for, or the latest."""
    query: GraphVersionQuery = call.params
    return services.ecp.graphs.version(call.tenant, call.path["graph_id"], query.version)


def list_graphs(call: Call, services: Services) -> GraphListResponse:
    """A page of the tenant's graphs: the latest version of each, by graph id."""
    query: PageQuery = call.params
    found, cursor = services.ecp.graphs.graphs_page(
        call.tenant, limit=query.limit, cursor=query.cursor
    )
    return GraphListResponse(graphs=tuple(found), next_cursor=cursor)


def list_graph_versions(call: Call, services: Services) -> GraphVersionListResponse:
    """A page of a graph's versions, oldest first."""
    query: PageQuery = call.params
    found, cursor = services.ecp.graphs.versions_page(
        call.tenant, call.path["graph_id"], limit=query.limit, cursor=query.cursor
    )
    return GraphVersionListResponse(versions=tuple(found), next_cursor=cursor)


def list_deployments(call: Call, services: Services) -> DeploymentListResponse:
    """A page of the tenant's deployments, by deployment_ref."""
    query: PageQuery = call.params
    found, cursor = services.ecp.graphs.deployments_page(
        call.tenant, limit=query.limit, cursor=query.cursor
    )
    return DeploymentListResponse(deployments=tuple(found), next_cursor=cursor)


def create_deployment(call: Call, services: Services) -> Reply:
    """Deploy a graph version (201), or find the identical deployment (200)."""
    deployment, created = services.ecp.graphs.deploy(call.tenant, call.body)
    return Reply(body=deployment, status=201 if created else 200)


def get_deployment(call: Call, services: Services) -> Deployment:
    """A deployment."""
    return services.ecp.graphs.deployment(call.tenant, call.path["ref"])


def put_policy(call: Call, services: Services) -> DeploymentPolicy:
    """Set a deployment's policy."""
    return services.ecp.graphs.put_policy(call.tenant, call.path["ref"], call.body)


def get_policy(call: Call, services: Services) -> DeploymentPolicy:
    """A deployment's policy; 404 when it has none."""
    policy = services.ecp.graphs.policy(call.tenant, call.path["ref"])
    if policy is None:
        raise NotFound(f"deployment {call.path['ref']!r} has no policy")
    return policy


def create_contract(call: Call, services: Services) -> Reply:
    """Create a contract (201), or find the identical one (200)."""
    contract, created = services.ecp.contracts.create(call.tenant, call.body)
    return Reply(body=contract, status=201 if created else 200)


def get_contract(call: Call, services: Services) -> Contract:
    """A contract."""
    return services.ecp.contracts.get(call.tenant, call.path["name"])


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/graphs",
        handler=register_graph,
        operation_id="graphs_register",
        tag=TAG,
        summary="Register a graph; an identical definition returns its version",
        permission=Permission.GRAPH_WRITE,
        body=GraphDefinition,
        response=GraphRegistration,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/graphs",
        handler=list_graphs,
        operation_id="graphs_list",
        tag=TAG,
        summary="The tenant's graphs: the latest version of each, by graph id",
        permission=Permission.GRAPH_READ,
        response=GraphListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/v1/graphs/{graph_id}/versions",
        handler=list_graph_versions,
        operation_id="graphs_list_versions",
        tag=TAG,
        summary="A graph's versions, oldest first",
        permission=Permission.GRAPH_READ,
        response=GraphVersionListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/v1/graphs/{graph_id}",
        handler=get_graph,
        operation_id="graphs_get",
        tag=TAG,
        summary="Read a graph version",
        permission=Permission.GRAPH_READ,
        response=GraphVersion,
        query=GraphVersionQuery,
    ),
    Operation(
        method="POST",
        path="/v1/deployments",
        handler=create_deployment,
        operation_id="graphs_create_deployment",
        tag=TAG,
        summary="Deploy a graph version under a deployment_ref",
        permission=Permission.DEPLOYMENT_WRITE,
        body=CreateDeploymentRequest,
        response=Deployment,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/deployments",
        handler=list_deployments,
        operation_id="graphs_list_deployments",
        tag=TAG,
        summary="The tenant's deployments, by deployment_ref",
        permission=Permission.GRAPH_READ,
        response=DeploymentListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/v1/deployments/{ref}",
        handler=get_deployment,
        operation_id="graphs_get_deployment",
        tag=TAG,
        summary="Read a deployment",
        permission=Permission.GRAPH_READ,
        response=Deployment,
    ),
    Operation(
        method="PUT",
        path="/v1/deployments/{ref}/policy",
        handler=put_policy,
        operation_id="graphs_put_policy",
        tag=TAG,
        summary="Set the capabilities a deployment's policy denies",
        permission=Permission.POLICY_WRITE,
        body=DeploymentPolicyRequest,
        response=DeploymentPolicy,
    ),
    Operation(
        method="GET",
        path="/v1/deployments/{ref}/policy",
        handler=get_policy,
        operation_id="graphs_get_policy",
        tag=TAG,
        summary="Read a deployment's policy",
        permission=Permission.GRAPH_READ,
        response=DeploymentPolicy,
    ),
    Operation(
        method="POST",
        path="/v1/contracts",
        handler=create_contract,
        operation_id="graphs_create_contract",
        tag=TAG,
        summary="Create a contract (a JSON Schema for approval edits)",
        permission=Permission.CONTRACT_WRITE,
        body=CreateContractRequest,
        response=Contract,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/contracts/{name}",
        handler=get_contract,
        operation_id="graphs_get_contract",
        tag=TAG,
        summary="Read a contract",
        permission=Permission.GRAPH_READ,
        response=Contract,
    ),
]
