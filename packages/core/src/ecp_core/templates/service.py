"""Use cases for templates: create a version, read, list, instantiate into a graph (ADR 0045)."""

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ecp_core.canonical import json_digest
from ecp_core.errors import Conflict, FieldError, NotFound, ValidationFailed
from ecp_core.graphs.definition import GraphDefinition, GraphRegistration
from ecp_core.graphs.validation import validate_graph
from ecp_core.pages import check_limit, decode_cursor, next_page
from ecp_core.ports.system import Clock
from ecp_core.ports.templates import TemplatesUnit
from ecp_core.registry.service import GraphRegistry
from ecp_core.templates.model import (
    CreateTemplateRequest,
    InstantiateTemplateRequest,
    TemplateInstantiation,
    TemplateSource,
    TemplateVersion,
)
from ecp_core.templates.rules import completed, declared, defaults, parameters_errors
from ecp_core.templates.substitution import MARKERS, hole_errors, substitute, used_parameters
from ecp_core.wire import structure

_CONCURRENT_RETRIES = 16
"""Each lost create means another one committed, so every retry makes progress: a create can
lose once to each concurrent creator of the name (three tries were too few for eight)."""

CHECK_GRAPH_ID = "template-check"
"""The graph id a template's graph is checked under when it is built from its defaults."""


def _located(error: ValidationFailed, *prefix: str | int) -> ValidationFailed:
    """The same error (same class and code) with every location under ``prefix``."""
    errors = [FieldError(loc=(*prefix, *e.loc), msg=e.msg) for e in error.errors]
    return type(error)(error.detail, errors=errors)


def _refuse(detail: str, errors: Sequence[FieldError]) -> None:
    if errors:
        raise ValidationFailed(detail, errors=errors)


def build_graph(graph: dict[str, Any], values: dict[str, Any], graph_id: str) -> GraphDefinition:
    """The graph definition ``graph`` makes with ``values`` under ``graph_id``.

    Invalid shapes are ValidationFailed located under ``graph``.
    """
    data = {**substitute(graph, values), "graph_id": graph_id}
    try:
        return structure(data, GraphDefinition, what="the instantiated graph")
    except ValidationFailed as invalid:
        raise _located(invalid, "graph") from None


class TemplateService:
    """Stores template versions and instantiates them through the graph registry."""

    def __init__(
        self,
        uow: Callable[[], TemplatesUnit],
        clock: Clock,
        registry: GraphRegistry,
        known_actions: Collection[str] | None = None,
    ) -> None:
        """Use cases over ``uow``; graphs are registered by ``registry``.

        ``known_actions`` (when given) refuses, at creation, a template whose graph built from
        its defaults names an action the service cannot run, as the registry does.
        """
        self._uow = uow
        self._clock = clock
        self._registry = registry
        self._known_actions = known_actions

    def create(
        self, tenant_id: str, request: CreateTemplateRequest
    ) -> tuple[TemplateVersion, bool]:
        """Store ``request`` as the name's next version; identical content returns its version."""
        self.check(request)
        content = {
            "description": request.description,
            "parameters": request.parameters,
            "graph": request.graph,
        }
        digest = json_digest(content)
        for _ in range(_CONCURRENT_RETRIES):
            try:
                return self._create_once(tenant_id, request, digest)
            except Conflict:
                continue  # another create took this version number; look again
        return self._create_once(tenant_id, request, digest)

    def check(self, request: CreateTemplateRequest) -> None:
        """ValidationFailed unless ``request`` is a template that can make a graph.

        The parameters schema is checked, every hole must name a declared parameter, and when
        the defaults alone are valid arguments for every parameter the graph uses, the graph
        they make must pass every check a registered graph does.
        """
        _refuse(
            "parameters is not a template's parameters schema",
            parameters_errors(request.parameters),
        )
        graph = request.graph
        if any(marker in graph for marker in MARKERS):
            msg = "the graph itself cannot be a parameter or a literal"
            raise ValidationFailed(
                "graph is not a valid template graph", errors=[FieldError(loc=("graph",), msg=msg)]
            )
        errors = hole_errors(graph, declared(request.parameters), ("graph",))
        if "graph_id" in graph:
            msg = "the graph id is given at instantiation, not in the template"
            errors.append(FieldError(loc=("graph", "graph_id"), msg=msg))
        _refuse("graph is not a valid template graph", errors)
        own = defaults(request.parameters)
        values, argument_errors = completed(request.parameters, own, used_parameters(graph))
        if argument_errors:
            return  # arguments are needed: the graph is checked once they are given
        definition = build_graph(graph, values, CHECK_GRAPH_ID)
        try:
            validate_graph(definition, self._known_actions)
        except ValidationFailed as invalid:
            raise _located(invalid, "graph") from None

    def _create_once(
        self, tenant_id: str, request: CreateTemplateRequest, digest: str
    ) -> tuple[TemplateVersion, bool]:
        with self._uow() as uow:
            existing = uow.templates.find_digest(tenant_id, request.name, digest)
            if existing is not None:
                return existing, False
            latest = uow.templates.latest(tenant_id, request.name)
            version = TemplateVersion(
                tenant_id=tenant_id,
                name=request.name,
                version=1 if latest is None else latest.version + 1,
                digest=digest,
                description=request.description,
                parameters=request.parameters,
                graph=request.graph,
                created_at=self._clock.now(),
            )
            uow.templates.add(version)
            uow.commit()
        return version, True

    def version(self, tenant_id: str, name: str, version: int | None = None) -> TemplateVersion:
        """One version (the latest when ``version`` is None); NotFound otherwise."""
        with self._uow() as uow:
            found = (
                uow.templates.latest(tenant_id, name)
                if version is None
                else uow.templates.get(tenant_id, name, version)
            )
        if found is None:
            raise NotFound(f"template {name!r} version {version or 'latest'} not found")
        return found

    def page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[TemplateVersion], str | None]:
        """The latest version of each of the tenant's templates, by name; the next cursor."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor("templates", cursor, 1)[0]
        with self._uow() as uow:
            found = uow.templates.latest_page(tenant_id, limit=limit + 1, after=after)
        return next_page(found, limit, "templates", lambda template: (template.name,))

    def instantiate(
        self, tenant_id: str, name: str, request: InstantiateTemplateRequest
    ) -> TemplateInstantiation:
        """Register the graph a template version makes with ``request.arguments``.

        The arguments are checked against the parameters (defaults fill the rest); the graph
        is registered by the registry exactly as ``POST /v1/graphs`` registers one, so the same
        arguments again are an idempotent repeat of the same graph version.
        """
        template = self.version(tenant_id, name, request.version)
        used = used_parameters(template.graph)
        values, errors = completed(template.parameters, request.arguments, used)
        _refuse(f"the arguments do not fit template {name!r}", errors)
        definition = build_graph(template.graph, values, request.graph_id)
        try:
            registration: GraphRegistration = self._registry.register(tenant_id, definition)
        except ValidationFailed as invalid:
            raise _located(invalid, "graph") from None
        return TemplateInstantiation(
            graph_id=registration.graph_id,
            version=registration.version,
            digest=registration.digest,
            created=registration.created,
            template=TemplateSource(
                name=template.name,
                version=template.version,
                digest=template.digest,
                arguments_digest=json_digest(values),
            ),
        )


__all__ = ["TemplateService", "build_graph"]
