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
    description: Annotated[str, Text(1, 4000)] | None = None
    parameters: dict[str, Any]
    graph: dict[str, Any]


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateVersion:
    """An immutable, numbered version of a tenant's template with its content digest."""

    tenant_id: str
    name: str
    version: Annotated[int, Range(1)]
    digest: str
    description: str | None
    parameters: dict[str, Any]
    graph: dict[str, Any]
    created_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateList:
    """The latest version of each template, by name; ``next_cursor`` when more remain."""

    templates: tuple[TemplateVersion, ...]
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class InstantiateTemplateRequest:
    """Body of ``POST /v1/templates/{name}/instantiate``: which graph, which version, the arguments.

    ``version`` None takes the latest version; the arguments are checked against the template's
    parameters, and a parameter left out takes its schema ``default``.
    """

    graph_id: Annotated[str, Text(1, 200, pattern=IDENTIFIER)]
    version: Annotated[int, Range(1)] | None = None
    arguments: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateSource:
    """Where an instantiated graph came from: the template version and the arguments' digest.

    ``arguments_digest`` is the ``sha256:`` digest of the canonical JSON of the arguments after
    defaults were applied, the values the graph was built from.
    """

    name: str
    version: int
    digest: str
    arguments_digest: str


@attrs.frozen(kw_only=True, field_transformer=checked)
class TemplateInstantiation:
    """What ``POST /v1/graphs`` answers for the registered graph, plus its ``template`` source."""

    graph_id: str
    version: int
    digest: str
    created: bool
    template: TemplateSource
