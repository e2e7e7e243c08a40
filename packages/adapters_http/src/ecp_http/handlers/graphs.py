"""Graphs, deployments, policies and contracts."""

from typing import TYPE_CHECKING

from ecp_core.contracts.model import Contract, CreateContractRequest
from ecp_core.deployments import CreateDeploymentRequest, Deployment
from ecp_core.errors import NotFound
from ecp_core.graphs.definition import GraphDefinition, GraphRegistration, GraphVersion
from ecp_core.permissions import Permission
from ecp_core.policies.model import DeploymentPolicy, PolicyRequest
from ecp_http.handlers.common import int_query
from ecp_http.routing import Call, Operation, QueryParam, Reply

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "graphs"


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    ecp = runtime.ecp

    def register_graph(call: Call) -> Reply:
        registration = ecp.graphs.register(call.tenant, call.body)
        return Reply(body=registration, status=201 if registration.created else 200)

    def get_graph(call: Call) -> GraphVersion:
        version = call.query.get("version")
        number = None if version is None else int_query(call.query, "version", 1, 1, 2**31 - 1)
        return ecp.graphs.version(call.tenant, call.path["graph_id"], number)

    def create_deployment(call: Call) -> Reply:
        deployment, created = ecp.graphs.deploy(call.tenant, call.body)
        return Reply(body=deployment, status=201 if created else 200)

    def get_deployment(call: Call) -> Deployment:
        return ecp.graphs.deployment(call.tenant, call.path["ref"])

    def put_policy(call: Call) -> DeploymentPolicy:
        return ecp.graphs.put_policy(call.tenant, call.path["ref"], call.body)

    def get_policy(call: Call) -> DeploymentPolicy:
        policy = ecp.graphs.policy(call.tenant, call.path["ref"])
        if policy is None:
            raise NotFound(f"deployment {call.path['ref']!r} has no policy")
        return policy

    def create_contract(call: Call) -> Reply:
        contract, created = ecp.contracts.create(call.tenant, call.body)
        return Reply(body=contract, status=201 if created else 200)

    def get_contract(call: Call) -> Contract:
        return ecp.contracts.get(call.tenant, call.path["name"])

    version_param = QueryParam(
        name="version",
        schema={"type": "integer", "minimum": 1},
        description="a version number; the latest when absent",
    )
    return [
        Operation(
            method="POST",
            path="/v1/graphs",
            handler=register_graph,
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
            path="/v1/graphs/{graph_id}",
            handler=get_graph,
            tag=TAG,
            summary="Read a graph version",
            permission=Permission.GRAPH_READ,
            response=GraphVersion,
            query=(version_param,),
        ),
        Operation(
            method="POST",
            path="/v1/deployments",
            handler=create_deployment,
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
            path="/v1/deployments/{ref}",
            handler=get_deployment,
            tag=TAG,
            summary="Read a deployment",
            permission=Permission.GRAPH_READ,
            response=Deployment,
        ),
        Operation(
            method="PUT",
            path="/v1/deployments/{ref}/policy",
            handler=put_policy,
            tag=TAG,
            summary="Set the capabilities a deployment's policy denies",
            permission=Permission.POLICY_WRITE,
            body=PolicyRequest,
            response=DeploymentPolicy,
        ),
        Operation(
            method="GET",
            path="/v1/deployments/{ref}/policy",
            handler=get_policy,
            tag=TAG,
            summary="Read a deployment's policy",
            permission=Permission.GRAPH_READ,
            response=DeploymentPolicy,
        ),
        Operation(
            method="POST",
            path="/v1/contracts",
            handler=create_contract,
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
            tag=TAG,
            summary="Read a contract",
            permission=Permission.GRAPH_READ,
            response=Contract,
        ),
    ]
