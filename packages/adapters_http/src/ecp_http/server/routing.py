"""Operations: one declaration per route, used by the app and by the OpenAPI document alike."""

import collections
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ecp_core.canonical import storable_text
from ecp_core.errors import (
    DatabaseUnavailable,
    EcpError,
    FieldError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    UnknownParameter,
    UnsupportedMediaType,
    ValidationFailed,
)
from ecp_core.identity import ActorIdentity
from ecp_core.json_text import parse_json_text
from ecp_core.permissions import Permission, permissions_of
from ecp_core.wire import structure
from ecp_http.server.long_poll import Poll
from ecp_http.server.rendering import answer
from ecp_http.server.services import Services
from ecp_http.server.threads import HandlerThreads
from ecp_http.wire.query import min_length, parameters, structure_query


@attrs.frozen(kw_only=True)
class Call:
    """What a handler receives: the caller, path parameters, the query and the structured body.

    ``params`` is the operation's query model built from the query string (None when the
    operation declares none); ``query`` is the query string as given (for ``Link`` headers);
    ``raw`` is the body's bytes as received, for an operation that asks for them (``raw_body``).
    """

    actor: ActorIdentity | None
    path: Mapping[str, str]
    query: Mapping[str, str] = attrs.field(factory=dict)
    params: Any = None
    body: Any = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    raw: bytes | None = None
    form: Mapping[str, str] = attrs.field(factory=dict)
    """The fields of an HTML form post, for an operation that takes one (``form``)."""

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
class HeaderParam:
    """A documented request header."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""
    required: bool = False


@attrs.frozen(kw_only=True)
class Operation:
    """One route: method, path, permission, request and response models, and the handler."""

    method: str
    path: str
    handler: Callable[[Call, Services], Any]
    summary: str
    tag: str
    permission: Permission | None
    body: type | None = None
    response: type | None = None
    status: int = 200
    query: type | None = None
    """The query model (an attrs class, see :mod:`ecp_http.wire.query`); None: no parameters."""
    extra_statuses: tuple[int, ...] = ()
    public: bool = False
    media_type: str = "application/json"
    alternate_media: tuple[str, ...] = ()
    """Further media types of the success answer (text bodies), chosen by a query parameter."""
    bulk: bool = False
    """Takes batches: the larger body cap (``ECP_MAX_EVIDENCE_BODY_BYTES``) applies."""
    headers: tuple[HeaderParam, ...] = ()
    """Request headers the operation reads (documented; the handler checks them)."""
    raw_body: bool = False
    """The handler gets the body's bytes unparsed in ``Call.raw`` (e.g. to verify a signature);
    a ``body`` model is then documented but not read: the handler reads it (ADR 0060)."""
    form: bool = False
    """Takes an HTML form post (``application/x-www-form-urlencoded``) into ``Call.form``."""
    forbidden_codes: tuple[str, ...] = ()
    """403 codes the operation gives besides ``forbidden`` (rules of the resource, ADR 0075)."""
    optional_body: bool = False
    """The ``body`` may be left out: an empty request body reaches the handler as None."""
    operation_id: str = attrs.field(
        default=attrs.Factory(lambda operation: operation.handler.__name__, takes_self=True)
    )
    """The OpenAPI ``operationId`` and a generated client's method name (ADR 0055):
    ``<tag>_<verb>[_<object>]`` in snake_case, unique, declared with the operation so that
    renaming a handler changes nothing on the wire."""


@attrs.frozen(kw_only=True)
class BodyLimits:
    """How many bytes a request body may hold: most routes, and batch (``bulk``) routes."""

    default: int = 1024 * 1024
    bulk: int = 16 * 1024 * 1024

    def of(self, operation: Operation) -> int:
        """The cap for ``operation``'s body."""
        return self.bulk if operation.bulk else self.default


JSON_BODY = "application/json"
FORM_BODY = "application/x-www-form-urlencoded"


def _check_media_type(request: Request, expected: str) -> None:
    """Bodies are ``expected`` (JSON, or a form post) in UTF-8; another ``charset`` is refused."""
    media, _, params = request.headers.get("content-type", "").partition(";")
    charset = next(
        (
            value.strip().strip('"').lower()
            for name, _, value in (p.partition("=") for p in params.split(";"))
            if name.strip().lower() == "charset"
        ),
        "utf-8",
    )
    if media.strip().lower() != expected or charset not in ("utf-8", "utf8"):
        raise UnsupportedMediaType(
            f"request bodies must be {expected} in UTF-8"
            f" (got {request.headers.get('content-type') or 'no Content-Type'!r})"
        )


async def _read_body(request: Request, cap: int) -> bytes:
    """The body, read no further than ``cap`` bytes; a larger one is PayloadTooLarge."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > cap:
        raise PayloadTooLarge(f"the body is larger than {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise PayloadTooLarge(f"the body is larger than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _receive(request: Request, cap: int, expected: str) -> bytes | EcpError:
    """The body, or why it was not read (refused later, after authorization)."""
    try:
        if _has_body(request):
            _check_media_type(request, expected)
        return await _read_body(request, cap)
    except (PayloadTooLarge, UnsupportedMediaType) as refusal:
        return refusal


def parse_form(raw: bytes) -> dict[str, str]:
    """The fields of a form post; a field given twice, or text that is not UTF-8, is invalid."""
    try:
        pairs = urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationFailed("the form is not UTF-8 form data") from exc
    fields = dict(pairs)
    if len(fields) < len(pairs) or not all(storable_text(v) for v in fields.values()):
        raise ValidationFailed("a form field is repeated or holds text that cannot be stored")
    return fields


def _has_body(request: Request) -> bool:
    return request.headers.get("content-length", "0") != "0" or (
        "transfer-encoding" in request.headers
    )


def header_map(scope: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers by (lower-case) name; of a repeated one, the first, as Starlette's."""
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def next_link(path: str, query: Mapping[str, str], cursor: str | None) -> dict[str, str]:
    """An RFC 8288 ``Link`` header to the next page (the same query, the new cursor), or none."""
    if cursor is None:
        return {}
    params = urllib.parse.urlencode(
        {**{k: v for k, v in query.items() if k != "cursor"}, "cursor": cursor}
    )
    return {"Link": f'<{path}?{params}>; rel="next"'}


def _with_next_link(request: Request, body: Any, headers: Mapping[str, str]) -> Mapping[str, str]:  # noqa: ANN401
    """``headers`` plus a ``Link`` to the next page when ``body`` names one in ``next_cursor``."""
    cursor = getattr(body, "next_cursor", None)
    if not isinstance(cursor, str) or "Link" in headers:
        return headers
    return {**headers, **next_link(request.url.path, request.query_params, cursor)}


def _checked_parameters(
    request: Request, minimums: Mapping[str, int]
) -> tuple[dict[str, str], dict[str, str]]:
    """Path and query parameters; text no database can hold names nothing (404) or is invalid (422).

    ``minimums`` maps each declared query parameter to its fewest characters. One the operation
    does not declare is refused (422 ``unknown_parameter``); one given twice, or shorter than its
    minimum, is invalid (422).
    """
    path = {name: str(value) for name, value in request.path_params.items()}
    if not all(storable_text(value) for value in path.values()):
        raise NotFound("no such resource")
    if not request.scope.get("query_string"):  # most requests: nothing to parse
        return path, {}
    items = request.query_params.multi_items()
    unknown = sorted({name for name, _ in items if name not in minimums})
    if unknown:
        raise UnknownParameter(
            "unknown query parameters",
            errors=[
                FieldError(loc=("query", name), msg="this operation has no such parameter")
                for name in unknown
            ],
        )
    query = dict(items)
    errors = [
        FieldError(loc=("query", name), msg="must not contain U+0000 or unpaired surrogates")
        for name, value in query.items()
        if not storable_text(value)
    ]
    errors += [
        FieldError(loc=("query", name), msg="must not be empty")
        for name, value in query.items()
        if len(value) < minimums[name]
    ]
    if len(query) < len(items):
        counts = collections.Counter(name for name, _ in items)
        errors += [
            FieldError(loc=("query", name), msg="given more than once")
            for name in sorted(name for name, count in counts.items() if count > 1)
        ]
    if errors:
        raise ValidationFailed("invalid query parameters", errors=errors)
    return path, query


_Serve = Callable[[Request, bytes | EcpError | None], Any]
"""A worker-thread call that serves one request (the body as read, or why it was not)."""


def _retried_on_lost_connection(serve: _Serve) -> _Serve:
    """``serve`` for a read (GET handlers never write): a connection lost under it, tried again.

    Once, on the fresh, checked connection the pool hands out; a wait for a connection that ran
    out is not tried again (ADR 0021).
    """

    def serve_read(request: Request, raw_body: bytes | EcpError | None) -> Any:  # noqa: ANN401
        try:
            return serve(request, raw_body)
        except DatabaseUnavailable as exc:
            if not exc.connection_lost:
                raise
            return serve(request, raw_body)

    return serve_read


def endpoint(
    operation: Operation, services: Services, limits: BodyLimits, threads: HandlerThreads
) -> Callable[[Request], Any]:
    """The Starlette endpoint: authenticate, check the permission, parse, call on ``threads``."""
    model = operation.query
    minimums = (
        {} if model is None else {param.name: min_length(param) for param in parameters(model)}
    )
    authenticate = services.authenticate
    cap = limits.of(operation)

    def serve(request: Request, raw_body: bytes | EcpError | None) -> Any:  # noqa: ANN401
        """Authenticate, authorize, parse and call: one worker-thread hop per request.

        A body that could not be read (too large, wrong media type) is refused only after the
        caller is known to be allowed, so 401 and 403 come first.
        """
        headers = header_map(request.scope)
        actor = None if operation.public else authenticate(headers)
        permission = operation.permission
        if (
            actor is not None
            and permission is not None
            and permission not in permissions_of(actor.roles)
        ):
            raise Forbidden(f"this needs the {permission.value} permission")
        if isinstance(raw_body, EcpError):
            raise raw_body
        path, query = _checked_parameters(request, minimums)
        params = None if model is None else structure_query(model, query)
        body: Any = None
        if (
            operation.body is not None
            and raw_body is not None
            and (raw_body or not operation.optional_body)
            and not operation.raw_body
        ):
            body = structure(parse_json_text(raw_body), operation.body, what="the body")
        raw = raw_body if operation.raw_body else None
        form = parse_form(raw_body) if operation.form and raw_body is not None else {}
        call = Call(
            actor=actor,
            path=path,
            query=query,
            params=params,
            body=body,
            headers=headers,
            raw=raw,
            form=form,
        )
        return operation.handler(call, services)

    attempt = _retried_on_lost_connection(serve) if operation.method == "GET" else serve

    async def handle(request: Request) -> Response:
        wants_body = operation.body is not None or operation.raw_body or operation.form
        expected = FORM_BODY if operation.form else JSON_BODY
        raw_body = await _receive(request, cap, expected) if wants_body else None
        result = await threads.run(attempt, request, raw_body)
        if isinstance(result, Poll):  # a long poll waits on the event loop, not in a thread
            result = await result.settle(request.is_disconnected)
        if isinstance(result, Response):  # HTML and other non-JSON answers pass through
            return result
        if isinstance(result, Reply):
            headers = _with_next_link(request, result.body, result.headers)
            return answer(result.body, result.status, headers)
        return answer(result, operation.status, _with_next_link(request, result, {}))

    handle.__name__ = operation.operation_id
    return handle


def routes(
    operations: Sequence[Operation],
    services: Services,
    limits: BodyLimits | None = None,
    *,
    threads: HandlerThreads,
) -> list[Route]:
    """Starlette routes for ``operations``: one per path, so a 405 names every method in ``Allow``."""
    limits = limits or BodyLimits()
    by_path: dict[str, dict[str, Callable[[Request], Any]]] = {}
    for op in operations:
        by_path.setdefault(op.path, {})[op.method] = endpoint(op, services, limits, threads)
    return [
        Route(path, _by_method(handlers), methods=list(handlers))
        for path, handlers in by_path.items()
    ]


def _by_method(handlers: Mapping[str, Callable[[Request], Any]]) -> Callable[[Request], Any]:
    """One endpoint for a path's methods (HEAD answers like GET; Starlette refuses the rest)."""
    if len(handlers) == 1:
        return next(iter(handlers.values()))

    async def by_method(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await handlers[method](request)  # type: ignore[no-any-return]

    return by_method
