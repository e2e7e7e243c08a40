"""Graph templates: create a version, read, list, and instantiate into a graph (ADR 0045)."""

from ecp_core.errors import NotFound
from ecp_core.permissions import Permission
from ecp_core.templates.model import (
    CreateTemplateRequest,
    InstantiateTemplateRequest,
    TemplateInstantiation,
    TemplateListResponse,
    TemplateVersion,
)
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import PageQuery

TAG = "templates"

MAX_VERSION = 2**31 - 1
"""The largest version number storage can hold; a larger one in a path names nothing."""


def create_template(call: Call, services: Services) -> Reply:
    """Store a template version (201), or find the identical version stored before (200)."""
    template, created = services.ecp.templates.create(call.tenant, call.body)
    return Reply(body=template, status=201 if created else 200)


def list_templates(call: Call, services: Services) -> TemplateListResponse:
    """A page of the tenant's templates: the latest version of each, by name."""
    query: PageQuery = call.params
    found, cursor = services.ecp.templates.page(call.tenant, limit=query.limit, cursor=query.cursor)
    return TemplateListResponse(templates=tuple(found), next_cursor=cursor)


def get_template(call: Call, services: Services) -> TemplateVersion:
    """The latest version of a template."""
    return services.ecp.templates.version(call.tenant, call.path["name"])


def get_template_version(call: Call, services: Services) -> TemplateVersion:
    """One version of a template; a version that is not a stored number is 404."""
    name, text = call.path["name"], call.path["version"]
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_VERSION:
        raise NotFound(f"template {name!r} version {text!r} not found")
    return services.ecp.templates.version(call.tenant, name, int(text))


def instantiate_template(call: Call, services: Services) -> Reply:
    """Register the graph a template makes with the arguments (201), or find it again (200)."""
    made = services.ecp.templates.instantiate(call.tenant, call.path["name"], call.body)
    return Reply(body=made, status=201 if made.created else 200)


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/templates",
        handler=create_template,
        operation_id="templates_create",
        tag=TAG,
        summary="Create a template version; identical content returns its version",
        permission=Permission.TEMPLATE_WRITE,
        body=CreateTemplateRequest,
        response=TemplateVersion,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/templates",
        handler=list_templates,
        operation_id="templates_list",
        tag=TAG,
        summary="The tenant's templates: the latest version of each, by name",
        permission=Permission.GRAPH_READ,
        response=TemplateListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/v1/templates/{name}",
        handler=get_template,
        operation_id="templates_get",
        tag=TAG,
        summary="Read the latest version of a template",
        permission=Permission.GRAPH_READ,
        response=TemplateVersion,
    ),
    Operation(
        method="GET",
        path="/v1/templates/{name}/versions/{version}",
        handler=get_template_version,
        operation_id="templates_get_version",
        tag=TAG,
        summary="Read one version of a template",
        permission=Permission.GRAPH_READ,
        response=TemplateVersion,
    ),
    Operation(
        method="POST",
        path="/v1/templates/{name}/instantiate",
        handler=instantiate_template,
        operation_id="templates_instantiate",
        tag=TAG,
        summary="Register the graph a template version makes with the given arguments",
        permission=Permission.GRAPH_WRITE,
        body=InstantiateTemplateRequest,
        response=TemplateInstantiation,
        status=201,
        extra_statuses=(200,),
    ),
]
