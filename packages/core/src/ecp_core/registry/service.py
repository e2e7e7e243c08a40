"""Use cases for graphs, deployments and policies: registering, deploying, setting policies."""

from collections.abc import Callable, Collection, Sequence

from ecp_core.deployments import CreateDeploymentRequest, Deployment
from ecp_core.errors import Conflict, FieldError, NotFound, ValidationFailed
from ecp_core.graphs.definition import (
    ActionDescriptorV1,
    GraphDefinition,
    GraphRegistration,
    GraphVersion,
    graph_digest,
    version_ref,
)
from ecp_core.graphs.validation import validate_graph
from ecp_core.pages import (
    MAX_PAGE,
    check_limit,
    decode_cursor,
    encode_cursor,
    invalid_cursor,
    next_page,
)
from ecp_core.policies.model import DeploymentPolicy, DeploymentPolicyRequest
from ecp_core.ports.contracts import WithContracts
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.ports.registry import RegistryUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.types import NodeKind

_CONCURRENT_RETRIES = 3


class GraphRegistry:
    """Registers graph versions, deploys them and sets deployment policies."""

    def __init__(
        self,
        uow: Callable[[], RegistryUnit],
        clock: Clock,
        ids: IdFactory,
        known_actions: Collection[str] | None = None,
    ) -> None:
        """Use cases over ``uow``; ``known_actions`` (when given) refuses unknown actions.

        A graph whose action nodes name an action outside ``known_actions`` (a live view counts
        later registrations) raises UnknownAction, ``unknown_action``.
        """
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._known_actions = known_actions

    def register(self, tenant_id: str, definition: GraphDefinition) -> GraphRegistration:
        """Store ``definition`` as the next version; an identical one returns its version."""
        validate_graph(definition, self._known_actions)
        digest = graph_digest(definition)
        for _ in range(_CONCURRENT_RETRIES):
            try:
                return self._register_once(tenant_id, definition, digest)
            except Conflict:
                continue  # another registration took this version number; look again
        return self._register_once(tenant_id, definition, digest)

    def _register_once(
        self, tenant_id: str, definition: GraphDefinition, digest: str
    ) -> GraphRegistration:
        with self._uow() as uow:
            _require_contracts(uow, tenant_id, definition)
            existing = uow.graphs.find_digest(tenant_id, definition.graph_id, digest)
            if existing is not None:
                return GraphRegistration(
                    graph_id=existing.graph_id,
                    version=existing.version,
                    digest=digest,
                    created=False,
                )
            latest = uow.graphs.latest(tenant_id, definition.graph_id)
            version = GraphVersion(
                tenant_id=tenant_id,
                graph_id=definition.graph_id,
                version=1 if latest is None else latest.version + 1,
                digest=digest,
                definition=definition,
                created_at=self._clock.now(),
            )
            uow.graphs.add(version)
            uow.commit()
        return GraphRegistration(
            graph_id=version.graph_id, version=version.version, digest=digest, created=True
        )

    def version(self, tenant_id: str, graph_id: str, version: int | None = None) -> GraphVersion:
        """One version (the latest when ``version`` is None); NotFound otherwise."""
        with self._uow() as uow:
            found = (
                uow.graphs.latest(tenant_id, graph_id)
                if version is None
                else uow.graphs.get(tenant_id, graph_id, version)
            )
        if found is None:
            raise NotFound(f"graph {graph_id!r} version {version or 'latest'} not found")
        return found

    def definition(self, tenant_id: str, graph_version_ref: str) -> GraphDefinition:
        """The definition behind a ``graph_id@version`` ref (a run's graph); NotFound otherwise."""
        with self._uow() as uow:
            return require_graph(uow, tenant_id, graph_version_ref)

    def deploy(self, tenant_id: str, request: CreateDeploymentRequest) -> tuple[Deployment, bool]:
        """Create a deployment; repeating an identical request returns it (``False``: not new).

        A repeat that names another ``max_concurrent_runs`` than the deployment has is a Conflict
        (``PUT /v1/deployments/{ref}/limits`` changes it); one that names none matches any.
        """
        try:
            return self._deploy_once(tenant_id, request)
        except Conflict:
            # Either bound elsewhere (raised again below) or a concurrent identical deploy won.
            return self._deploy_once(tenant_id, request)

    def _deploy_once(
        self, tenant_id: str, request: CreateDeploymentRequest
    ) -> tuple[Deployment, bool]:
        with self._uow() as uow:
            graph = (
                uow.graphs.latest(tenant_id, request.graph_id)
                if request.graph_version is None
                else uow.graphs.get(tenant_id, request.graph_id, request.graph_version)
            )
            if graph is None:
                wanted = request.graph_version or "latest"
                raise NotFound(f"graph {request.graph_id!r} version {wanted} not found")
            existing = uow.deployments.get(tenant_id, request.deployment_ref)
            if existing is not None:
                asked = request.max_concurrent_runs  # left out: the limit stays as it is
                if asked is not None and existing.max_concurrent_runs != asked:
                    ref = request.deployment_ref
                    msg = f"deployment {ref!r} exists with another limit; PUT its limits instead"
                    raise Conflict(msg)
                if existing.graph_version_ref == graph.ref:
                    return existing, False
                bound = existing.graph_version_ref
                raise Conflict(f"deployment {request.deployment_ref!r} is bound to {bound}")
            deployment = Deployment(
                tenant_id=tenant_id,
                deployment_ref=request.deployment_ref,
                graph_id=graph.graph_id,
                graph_version=graph.version,
                graph_version_ref=version_ref(graph.graph_id, graph.version),
                created_at=self._clock.now(),
                max_concurrent_runs=request.max_concurrent_runs,
            )
            uow.deployments.add(deployment)
            uow.commit()
        return deployment, True

    def deployment(self, tenant_id: str, deployment_ref: str) -> Deployment:
        """One deployment; NotFound otherwise."""
        with self._uow() as uow:
            return require_deployment(uow, tenant_id, deployment_ref)

    def graphs_page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[GraphVersion], str | None]:
        """The latest version of each of the tenant's graphs, by graph id; the next cursor."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor("graphs", cursor, 1)[0]
        with self._uow() as uow:
            found = uow.graphs.latest_page(tenant_id, limit=limit + 1, after=after)
        return next_page(found, limit, "graphs", lambda graph: (graph.graph_id,))

    def task_actions(self, tenant_id: str) -> list[ActionDescriptorV1]:
        """The actions the task nodes of the tenant's graphs (latest versions) offer to workers.

        One per (topic, fingerprint), ordered so; a topic workers serve needs no handler here.
        """
        found: dict[tuple[str, str], ActionDescriptorV1] = {}
        after: str | None = None
        while True:
            with self._uow() as uow:
                graphs = uow.graphs.latest_page(tenant_id, limit=MAX_PAGE, after=after)
            for graph in graphs:
                for node in graph.definition.nodes:
                    if node.kind is NodeKind.TASK and node.action is not None:
                        found.setdefault((node.action.name, node.action.fingerprint), node.action)
            if len(graphs) < MAX_PAGE:
                return [found[key] for key in sorted(found)]
            after = graphs[-1].graph_id

    def versions_page(
        self, tenant_id: str, graph_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[GraphVersion], str | None]:
        """A graph's versions, oldest first; the next cursor. NotFound for an unknown graph."""
        check_limit(limit)
        after = None if cursor is None else _version_position(graph_id, cursor)
        with self._uow() as uow:
            found = uow.graphs.versions_page(tenant_id, graph_id, limit=limit + 1, after=after)
            if not found and uow.graphs.latest(tenant_id, graph_id) is None:
                raise NotFound(f"graph {graph_id!r} not found")
        page = found[:limit]
        if len(found) <= limit:
            return page, None
        return page, encode_cursor("graph_versions", graph_id, str(page[-1].version))

    def deployments_page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Deployment], str | None]:
        """The tenant's deployments by ref; the next cursor."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor("deployments", cursor, 1)[0]
        with self._uow() as uow:
            found = uow.deployments.page(tenant_id, limit=limit + 1, after=after)
        return next_page(found, limit, "deployments", lambda d: (d.deployment_ref,))

    def put_policy(
        self, tenant_id: str, deployment_ref: str, request: DeploymentPolicyRequest
    ) -> DeploymentPolicy:
        """Replace the deployment's policy; the version grows only when the content changes."""
        denied = tuple(sorted(set(request.deny_capabilities)))
        with self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            current = uow.policies.get(tenant_id, deployment_ref)
            if current is not None and current.deny_capabilities == denied:
                return current
            policy = DeploymentPolicy(
                tenant_id=tenant_id,
                deployment_ref=deployment_ref,
                policy_id=self._ids.new_id() if current is None else current.policy_id,
                policy_version=1 if current is None else current.policy_version + 1,
                deny_capabilities=denied,
                updated_at=self._clock.now(),
            )
            uow.policies.put(policy)
            uow.commit()
        return policy

    def policy(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The deployment's policy, or None when it has none."""
        with self._uow() as uow:
            require_deployment(uow, tenant_id, deployment_ref)
            return uow.policies.get(tenant_id, deployment_ref)

    def policies_of(
        self, tenant_id: str, deployment_refs: Sequence[str]
    ) -> dict[str, DeploymentPolicy]:
        """The policies of the tenant's ``deployment_refs`` that have one, by ref, in one read."""
        with self._uow() as uow:
            return uow.policies.of_deployments(tenant_id, deployment_refs)


def _require_contracts(uow: WithContracts, tenant_id: str, definition: GraphDefinition) -> None:
    """Every ``resolution_schema_ref`` must name one of the tenant's contracts."""
    errors = [
        FieldError(loc=("nodes", index, "resolution_schema_ref"), msg="no such contract")
        for index, node in enumerate(definition.nodes)
        if node.resolution_schema_ref is not None
        and uow.contracts.get(tenant_id, node.resolution_schema_ref) is None
    ]
    if errors:
        raise ValidationFailed(f"graph {definition.graph_id!r} is invalid", errors=errors)


def _version_position(graph_id: str, cursor: str) -> int:
    """The version a versions cursor points after; a cursor of another graph is refused."""
    of_graph, version = decode_cursor("graph_versions", cursor, 2)
    if of_graph != graph_id or not (version.isascii() and version.isdigit()):
        raise invalid_cursor()
    return int(version)


def require_deployment(uow: WithDeployments, tenant_id: str, deployment_ref: str) -> Deployment:
    """The deployment, or NotFound."""
    deployment = uow.deployments.get(tenant_id, deployment_ref)
    if deployment is None:
        raise NotFound(f"deployment {deployment_ref!r} not found")
    return deployment


def require_graph(uow: WithGraphs, tenant_id: str, graph_version_ref: str) -> GraphDefinition:
    """The definition behind a ``graph_id@version`` ref, or NotFound."""
    graph_id, _, version = graph_version_ref.rpartition("@")
    found = uow.graphs.get(tenant_id, graph_id, int(version)) if version.isdigit() else None
    if found is None:
        raise NotFound(f"graph {graph_version_ref} not found")
    return found.definition


__all__ = ["GraphRegistry", "require_deployment", "require_graph"]
