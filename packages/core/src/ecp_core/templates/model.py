"""Template requests, stored template versions and the answer to an instantiation (ADR 0045)."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.graphs.definition import IDENTIFIER

TemplateName = Annotated[str, Text(1, 200, no_whitespace=True)]
"""A template's name: 1 to 200 characters without whitespace, like a contract's."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateTemplateRequest:
    """Body of ``POST /v1/templates``: a graph with ``{"$param": name}`` holes, and their schema.

    ``parameters`` is a JSON Schema of ``type: object`` whose ``properties`` declare the
    parameters; ``graph`` is a graph definition without ``graph_id`` (given at instantiation)
    in which an object ``{"$param": "<name>"}`` stands for the whole value of that argument and
    ``{"$literal": value}`` for ``value`` taken verbatim.
    """

    name: TemplateName
    """The template's name within the tenant."""
    description: Annotated[str, Text(1, 4000)] | None = None
    """What the template is for, in words."""
    parameters: dict[str, Any]
    """A JSON Schema of `type: object` whose `properties` declare the parameters."""
    graph: dict[str, Any]
    """A graph definition without `graph_id`, where `{"$param": "<name>"}` stands for an argument.
    """


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateVersion:
    """An immutable, numbered version of a tenant's template with its content digest."""

    tenant_id: str
    name: str
    """The template's name within the tenant."""
    version: Annotated[int, Range(1)]
    """The version number, from 1; each new content adds one."""
    digest: str
    """The digest of the version's content."""
    description: str | None
    """What the template is for, in words."""
    parameters: dict[str, Any]
    """The JSON Schema of the parameters."""
    graph: dict[str, Any]
    """The graph definition with its `{"$param": ...}` holes."""
    created_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateListResponse:
    """The latest version of each template, by name; ``next_cursor`` when more remain."""

    templates: tuple[TemplateVersion, ...]
    """The latest version of each template, by name."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class InstantiateTemplateRequest:
    """Body of ``POST /v1/templates/{name}/instantiate``: which graph, which version, the arguments.

    ``version`` None takes the latest version; the arguments are checked against the template's
    parameters, and a parameter left out takes its schema ``default``.
    """

    graph_id: Annotated[str, Text(1, 200, pattern=IDENTIFIER)]
    version: Annotated[int, Range(1)] | None = None
    """The template version to build from; null takes the latest."""
    arguments: dict[str, Any] = attrs.field(factory=dict)
    """The value of each parameter; one left out takes its schema `default`."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateSource:
    """Where an instantiated graph came from: the template version and the arguments' digest.

    ``arguments_digest`` is the ``sha256:`` digest of the canonical JSON of the arguments after
    defaults were applied, the values the graph was built from.
    """

    name: str
    """The template's name."""
    version: int
    """The template version the graph was built from."""
    digest: str
    """That version's content digest."""
    arguments_digest: str
    """The `sha256:` digest of the canonical JSON of the arguments, defaults applied."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateInstantiation:
    """What ``POST /v1/graphs`` answers for the registered graph, plus its ``template`` source."""

    graph_id: str
    version: int
    """The version of the registered graph."""
    digest: str
    """The digest of the registered graph."""
    created: bool
    """Whether a new graph version was registered (false: the same one existed)."""
    template: TemplateSource
    """The template version and arguments the graph was built from."""
