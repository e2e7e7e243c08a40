"""Operations: one declaration per route, used by the app and by the OpenAPI document alike."""

import json
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ecp_core.canonical import storable_text
from ecp_core.errors import FieldError, Forbidden, MalformedRequest, NotFound, ValidationFailed
from ecp_core.identity import ActorIdentity
from ecp_core.permissions import Permission, permissions_of
from ecp_core.wire import structure, unstructure


@attrs.frozen(kw_only=True)
class Call:
    """What a handler receives: the caller, path and query parameters, the structured body."""

    actor: ActorIdentity | None
    path: Mapping[str, str]
    query: Mapping[str, str]
    body: Any = None
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def tenant(self) -> str:
        """The caller's tenant: every read and write is scoped to it."""
        if self.actor is None:
            msg = "a public operation has no tenant"
            raise RuntimeError(msg)
        return self.actor.tenant_id


@attrs.frozen(kw_only=True)
class Reply:
    """A handler's answer when the status or headers differ from the operation's default."""

    body: Any
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class QueryParam:
    """A documented query parameter."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""
    required: bool = False


@attrs.frozen(kw_only=True)
class Operation:
    """One route: method, path, permission, request and response models, and the handler."""

    method: str
    path: str
    handler: Callable[[Call], Any]
    summary: str
    tag: str
    permission: Permission | None
    body: type | None = None
    response: type | None = None
    status: int = 200
    query: tuple[QueryParam, ...] = ()
    extra_statuses: tuple[int, ...] = ()
    public: bool = False
    media_type: str = "application/json"
    alternate_media: tuple[str, ...] = ()
    """Further media types of the success answer (text bodies), chosen by a query parameter."""

    @property
    def operation_id(self) -> str:
        """A stable id: the handler's name."""
        return self.handler.__name__


Authenticate = Callable[[Mapping[str, str]], ActorIdentity]


def _parse_json(raw: bytes) -> Any:  # noqa: ANN401
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedRequest(f"the body is not JSON: {exc}") from exc


def _render(value: Any, status: int, headers: Mapping[str, str] | None = None) -> Response:  # noqa: ANN401
    if value is None and status == 204:  # noqa: PLR2004
        return Response(status_code=204, headers=headers)
    return JSONResponse(unstructure(value), status_code=status, headers=headers)


def _checked_parameters(request: Request) -> tuple[dict[str, str], dict[str, str]]:
    """Path and query parameters; text no database can hold names nothing (404) or is invalid (422)."""
    path = {name: str(value) for name, value in request.path_params.items()}
    if not all(storable_text(value) for value in path.values()):
        raise NotFound("no such resource")
    query = dict(request.query_params)
    bad = [name for name, value in query.items() if not storable_text(value)]
    if bad:
        raise ValidationFailed(
            "invalid query parameters",
            errors=[
                FieldError(
                    loc=("query", name), msg="must not contain U+0000 or unpaired surrogates"
                )
                for name in bad
            ],
        )
    return path, query


def endpoint(operation: Operation, authenticate: Authenticate) -> Callable[[Request], Any]:
    """The Starlette endpoint that authenticates, checks the permission, parses and calls."""

    def serve(request: Request, raw_body: bytes | None) -> Any:  # noqa: ANN401
        """Authenticate, authorize, parse and call: one worker-thread hop per request."""
        headers = dict(request.headers)
        actor = None if operation.public else authenticate(headers)
        permission = operation.permission
        if (
            actor is not None
            and permission is not None
            and permission not in permissions_of(actor.roles)
        ):
            raise Forbidden(f"this needs the {permission.value} permission")
        path, query = _checked_parameters(request)
        body = None
        if operation.body is not None and raw_body is not None:
            body = structure(_parse_json(raw_body), operation.body, what="the body")
        call = Call(actor=actor, path=path, query=query, body=body, headers=headers)
        return operation.handler(call)

    async def handle(request: Request) -> Response:
        raw_body = await request.body() if operation.body is not None else None
        result = await run_in_threadpool(serve, request, raw_body)
        if isinstance(result, Response):  # HTML and other non-JSON answers pass through
            return result
        if isinstance(result, Reply):
            return _render(result.body, result.status, result.headers)
        return _render(result, operation.status)

    handle.__name__ = operation.operation_id
    return handle


def routes(operations: list[Operation], authenticate: Authenticate) -> list[Route]:
    """Starlette routes for ``operations``."""
    return [Route(op.path, endpoint(op, authenticate), methods=[op.method]) for op in operations]
