"""The ``http_request`` built-in action: one HTTP call from a run, guarded, capped and secret-safe.

ADR 0028. The arguments are checked before anything is sent; the target passes the outbound address
guard and the connection goes to the address that was checked (:mod:`ecp_http.outbound`, as for
webhooks); secrets are named, looked up at call time (:mod:`ecp_http.config.action_secrets`) and never
written to the output, the audit record or an error; a response over the cap fails the attempt
instead of being truncated. Every failure raises :class:`HttpRequestFailed`, whose message starts
with a stable code, so the run ends ``failed`` with ``action_error`` and the attempt's ``error``
names the reason.
"""

import re
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import attrs
import httpx

from ecp_core.canonical import canonical_json, storable_text
from ecp_core.constraints import Items, Range, Text, checked
from ecp_core.errors import EcpError, ValidationFailed
from ecp_core.json_text import parse_json_text
from ecp_core.runs.run.actions import ActionContext, ActionRegistry, ActionSource, undeclared
from ecp_core.types import Capability, SideEffectClass
from ecp_core.wire import structure
from ecp_http.config.action_secrets import (
    SECRET_NAME_PATTERN,
    ActionSecrets,
    SecretUnavailable,
    redacted,
)
from ecp_http.config.settings import Settings
from ecp_http.outbound import (
    AddressGuard,
    Refusal,
    Resolver,
    outbound_client,
    pin,
    pinned_stream,
    resolve_host,
)
from ecp_http.wire.json_schema import SchemaBuilder

ACTION_NAME = "http_request"
FINGERPRINT = "http_request/1"
CAPABILITIES = (Capability.NETWORK_WRITE, Capability.EXTERNAL_API_CALL)
"""What the action does; a node that runs it must declare both, so that policies can deny it."""
DEFAULT_TIMEOUT_SECONDS = 10
MAX_TIMEOUT_SECONDS = 60
MAX_HEADERS = 64
USER_AGENT = "ecp-http-request"
"""Sent unless the arguments name a ``User-Agent`` of their own."""

HEADER_NAME_PATTERN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
"""An RFC 9110 field name (a token)."""
HEADER_VALUE_PATTERN = r"(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)?"
"""Visible ASCII, inner spaces and tabs: no line breaks, no surrounding whitespace."""
MANAGED_HEADERS = frozenset(
    {
        "connection",
        "content-length",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers the client sets itself (framing and routing); arguments may not name them."""

HeaderName = Annotated[str, Text(1, 256, pattern=HEADER_NAME_PATTERN)]
HeaderValue = Annotated[str, Text(0, 8192, pattern=HEADER_VALUE_PATTERN)]
SecretName = Annotated[str, Text(1, 128, pattern=SECRET_NAME_PATTERN)]
Method = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

_HEADER_VALUE = re.compile(HEADER_VALUE_PATTERN)
_JSON_TYPE = re.compile(r"application/(?:[\w.+-]+\+)?json", re.IGNORECASE)


def _no_managed(_: object, attribute: "attrs.Attribute[Any]", value: Mapping[str, str]) -> None:
    taken = sorted(name for name in value if name.lower() in MANAGED_HEADERS)
    if taken:
        msg = f"{attribute.name} may not set {', '.join(taken)}: the client sets it"
        raise ValueError(msg)


def _positive(_: object, attribute: "attrs.Attribute[Any]", value: float) -> None:
    if not value > 0:
        msg = f"{attribute.name} must be more than 0"
        raise ValueError(msg)


@attrs.frozen(kw_only=True, field_transformer=checked)
class HttpRequestArguments:
    """The arguments of ``http_request``: one request, its body, its timeout and its secrets.

    ``json`` (any JSON value but null) or ``text`` is the body, not both. ``secret_headers``
    maps a header name to the name of a secret whose value is sent in that header.
    """

    method: Method
    url: Annotated[str, Text(1, 8192, pattern=r"[hH][tT][tT][pP][sS]?://\S+")]
    headers: Annotated[dict[HeaderName, HeaderValue], Items(max_items=MAX_HEADERS)] = attrs.field(
        factory=dict, validator=_no_managed
    )
    json: Any = None
    text: str | None = None
    timeout_seconds: Annotated[float, Range(0, MAX_TIMEOUT_SECONDS)] = attrs.field(
        default=DEFAULT_TIMEOUT_SECONDS, validator=_positive
    )
    secret_headers: Annotated[dict[HeaderName, SecretName], Items(max_items=MAX_HEADERS)] = (
        attrs.field(factory=dict, validator=_no_managed)
    )

    def __attrs_post_init__(self) -> None:
        """The rules across fields: one body at most, and no header given twice."""
        if self.json is not None and self.text is not None:
            msg = "give json or text, not both"
            raise ValueError(msg)
        plain = {name.lower() for name in self.headers}
        both = sorted(name for name in self.secret_headers if name.lower() in plain)
        if both:
            msg = f"secret_headers and headers both set {', '.join(both)}"
            raise ValueError(msg)


class HttpRequestFailed(Exception):
    """The attempt failed; ``code`` says why (the message is ``"<code>: <detail>"``)."""

    def __init__(self, code: str, detail: str) -> None:
        """A failure with a stable ``code`` and a sentence that never holds a secret value."""
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


def parse_arguments(arguments: Mapping[str, Any]) -> HttpRequestArguments:
    """The arguments as a model; HttpRequestFailed ``invalid_arguments`` naming each bad field."""
    try:
        return structure(dict(arguments), HttpRequestArguments, what="http_request arguments")
    except ValidationFailed as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error.loc)) or 'arguments'}: {error.msg}" for error in exc.errors
        )
        raise HttpRequestFailed("invalid_arguments", problems) from None


def arguments_schema() -> dict[str, Any]:
    """The JSON Schema of the arguments, generated from :class:`HttpRequestArguments`."""
    builder = SchemaBuilder()
    builder.ref(HttpRequestArguments)
    schema = dict(builder.components[HttpRequestArguments.__name__])
    properties = dict(schema["properties"])
    # What the generic renderer cannot say: an exclusive minimum, a bound on an object's size.
    timeout = {k: v for k, v in properties["timeout_seconds"].items() if k != "minimum"}
    properties["timeout_seconds"] = {**timeout, "exclusiveMinimum": 0}
    for name in ("headers", "secret_headers"):
        mapping = {k: v for k, v in properties[name].items() if k != "maxItems"}
        properties[name] = {**mapping, "maxProperties": MAX_HEADERS}
    schema["properties"] = properties
    return schema


def _redacted_json(value: Any, secrets: list[str]) -> Any:  # noqa: ANN401 - JSON
    if isinstance(value, str):
        return redacted(value, secrets)
    if isinstance(value, list):
        return [_redacted_json(item, secrets) for item in value]
    if isinstance(value, dict):
        return {redacted(k, secrets): _redacted_json(v, secrets) for k, v in value.items()}
    return value


class HttpRequestAction:
    """The ``http_request`` handler: guard, secrets and cap fixed at construction."""

    def __init__(
        self,
        *,
        guard: AddressGuard,
        secrets: ActionSecrets,
        max_bytes: int,
        resolver: Resolver = resolve_host,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``resolver`` answers for host names; ``clock`` measures the overall deadline."""
        self._guard = guard
        self._secrets = secrets
        self._max_bytes = max_bytes
        self._resolver = resolver
        self._clock = clock

    def __call__(self, context: ActionContext) -> Mapping[str, Any]:
        """Send the request; the output is ``{"status", "headers", "json" | "text"}``."""
        missing = undeclared(context, CAPABILITIES)
        if missing:
            raise HttpRequestFailed(
                "undeclared_capabilities",
                f"the node must declare the capabilities {', '.join(missing)} to call out",
            )
        arguments = parse_arguments(context.arguments)
        secret_headers = self._secret_headers(arguments.secret_headers)
        secrets = list(secret_headers.values())
        try:
            return self._send(arguments, secret_headers, secrets)
        except HttpRequestFailed as exc:
            raise HttpRequestFailed(exc.code, redacted(exc.detail, secrets)) from None

    def _secret_headers(self, named: Mapping[str, str]) -> dict[str, str]:
        found = {}
        for header, name in named.items():
            try:
                value = self._secrets.value(name)
            except SecretUnavailable as exc:
                raise HttpRequestFailed("secret_missing", str(exc)) from None
            if _HEADER_VALUE.fullmatch(value) is None:
                raise HttpRequestFailed(
                    "secret_invalid", f"the secret {name!r} cannot be sent in a header"
                )
            found[header] = value
        return found

    def _send(
        self, arguments: HttpRequestArguments, secret_headers: Mapping[str, str], secrets: list[str]
    ) -> dict[str, Any]:
        target = pin(arguments.url, self._guard, resolver=self._resolver)
        if isinstance(target, Refusal):
            raise HttpRequestFailed("target_refused", target.reason)
        content, headers = _body(arguments)
        headers.update(secret_headers)
        deadline = self._clock() + arguments.timeout_seconds
        try:
            with (
                outbound_client(arguments.timeout_seconds) as client,
                pinned_stream(
                    client, arguments.method, target, content=content, headers=headers
                ) as response,
            ):
                if not 200 <= response.status_code < 300:  # noqa: PLR2004 - the 2xx class
                    raise HttpRequestFailed(
                        "http_status",
                        f"the target answered {response.status_code} {response.reason_phrase}",
                    )
                body = self._read(response, deadline)
                return _output(response, body, secrets)
        except httpx.TimeoutException:
            raise HttpRequestFailed(
                "timeout", f"no full answer within {arguments.timeout_seconds:g} seconds"
            ) from None
        except httpx.HTTPError as exc:
            raise HttpRequestFailed("request_failed", f"{type(exc).__name__}: {exc}") from None

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        """The whole body, or a failure as soon as it is over the cap or the deadline passed."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise _too_large(self._max_bytes)
        chunks: list[bytes] = []
        read = 0
        for chunk in response.iter_bytes():
            read += len(chunk)
            if read > self._max_bytes:
                raise _too_large(self._max_bytes)
            if self._clock() > deadline:
                raise httpx.ReadTimeout("the overall deadline passed")
            chunks.append(chunk)
        return b"".join(chunks)


def _too_large(cap: int) -> HttpRequestFailed:
    return HttpRequestFailed(
        "response_too_large",
        f"the response is over {cap} bytes (ECP_HTTP_ACTION_MAX_BYTES); nothing was kept",
    )


def _body(arguments: HttpRequestArguments) -> tuple[bytes | None, dict[str, str]]:
    """The encoded body and the headers to send with it (a content type unless one is given)."""
    headers = dict(arguments.headers)
    named = {name.lower() for name in headers} | {n.lower() for n in arguments.secret_headers}
    if "user-agent" not in named:
        headers["User-Agent"] = USER_AGENT
    if arguments.json is not None:
        content, kind = canonical_json(arguments.json), "application/json"
    elif arguments.text is not None:
        content, kind = arguments.text.encode("utf-8"), "text/plain; charset=utf-8"
    else:
        return None, headers
    if "content-type" not in named:
        headers["Content-Type"] = kind
    return content, headers


def _output(response: httpx.Response, body: bytes, secrets: list[str]) -> dict[str, Any]:
    """``{"status", "headers", "json" | "text"}``, with any secret value the target echoed redacted."""
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    output: dict[str, Any] = {"status": response.status_code, "headers": headers}
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip()
    if body and _JSON_TYPE.fullmatch(kind):
        try:
            output["json"] = parse_json_text(body)
        except EcpError as exc:
            raise HttpRequestFailed(
                "invalid_response", f"the {kind} answer is not acceptable JSON: {exc}"
            ) from None
    else:
        try:
            text = body.decode(response.charset_encoding or "utf-8", errors="replace")
        except LookupError:
            text = body.decode("utf-8", errors="replace")
        if not storable_text(text):
            raise HttpRequestFailed("invalid_response", "the answer's text holds U+0000")
        output["text"] = text
    return _redacted_json(output, secrets) if secrets else output


def http_request_action(
    settings: Settings, secrets: ActionSecrets, *, resolver: Resolver = resolve_host
) -> HttpRequestAction:
    """The handler as the settings configure it (cap, private targets)."""
    allow = settings.http_action_allow_private_targets
    guard = AddressGuard(
        allow_loopback=allow,
        allow_private=allow,
        unlock_hint="ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS allows it",
    )
    return HttpRequestAction(
        guard=guard, secrets=secrets, max_bytes=settings.http_action_max_bytes, resolver=resolver
    )


def builtin_actions(registry: ActionRegistry, settings: Settings) -> None:
    """Register the server's own built-in actions beyond the core's: ``http_request``."""
    secrets = ActionSecrets(settings.secrets, settings.secrets_dir)
    registry.register(
        ACTION_NAME,
        http_request_action(settings, secrets),
        fingerprint=FINGERPRINT,
        capability_refs=CAPABILITIES,
        side_effect=SideEffectClass.NON_IDEMPOTENT,
        arguments_schema=arguments_schema(),
        source=ActionSource.BUILTIN,
    )
